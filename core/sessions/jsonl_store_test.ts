import assert from "node:assert/strict";
import { JsonlSessionStore } from "./jsonl_store.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";

runSessionStoreConformance("jsonl", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-jsonl-" });
  return {
    open: () => Promise.resolve(JsonlSessionStore.open({ dir })),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true });

Deno.test("jsonl store: readJson frames a stored line as it is, and serializes a line that is not in envelope form", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-jsonl-json-" });
  const file = `${dir}/s.jsonl`;
  // Line 1 is in envelope form with a payload written as `1.50` (kept as written); line 2 has spaces and another
  // field order (re-serialized from the parsed event); line 3 is a torn tail (skipped).
  const line1 =
    '{"id":"e1","session_id":"s","seq":1,"at":"2026-01-01T00:00:00.000Z","type":"session/created","payload":{"n":1.50},"parent_id":null}';
  const line2 =
    '{ "seq": 2, "id": "e2", "session_id": "s", "at": "2026-01-01T00:00:01.000Z", "type": "assistant/chunk", "payload": {"kind": "text", "text": "hi"}, "parent_id": "e1" }';
  await Deno.writeTextFile(file, `${line1}\n${line2}\n{"id":"e3","sess`);
  const store = JsonlSessionStore.open({ dir });
  try {
    const events = await store.read("s");
    const json = await store.readJson("s");
    assert.deepStrictEqual(json, [
      { seq: 1, json: line1 },
      { seq: 2, json: JSON.stringify(events[1]) },
    ]);
    assert.deepStrictEqual(json.map((item) => JSON.parse(item.json)), events);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
