import { JsonlSessionStore } from "./jsonl_store.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";

runSessionStoreConformance("jsonl", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-jsonl-" });
  return {
    open: () => Promise.resolve(JsonlSessionStore.open({ dir })),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true });
