import { MemorySessionStore } from "./memory_store.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";

runSessionStoreConformance("memory", () =>
  Promise.resolve({
    open: () => Promise.resolve(new MemorySessionStore()),
    cleanup: () => Promise.resolve(),
  }), { persistent: false, typedList: "exact" });
