import { SqliteSessionStore } from "./sqlite_store.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";

runSessionStoreConformance("sqlite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-" });
  return {
    open: () => Promise.resolve(SqliteSessionStore.open({ path: `${dir}/sessions.db` })),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true });
