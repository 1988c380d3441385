import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createContext, createMemoryLogger, type MemoryLogger } from "@terret/hames";
import type { SessionEvent } from "./envelope.ts";
import { JsonlSessionStore } from "./jsonl_store.ts";
import { SessionLog } from "./session_log.ts";
import { SqliteSessionStore } from "./sqlite_store.ts";
import type { SessionStore } from "./store.ts";

/** A log over `store` holding session "s" with seqs 1..5. */
async function fiveEvents(
  store: SessionStore,
): Promise<{ log: SessionLog; dispose(): Promise<void> }> {
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const log = new SessionLog(ctx, store);
  await log.create({ session_id: "s" });
  for (let i = 2; i <= 5; i++) {
    await log.append("s", { type: "assistant/chunk", payload: { kind: "text", text: `t${i}` } });
  }
  return { log, dispose: () => ctx.dispose() };
}

/** Pulls a stream from seq 1 until it throws; returns the seqs it yielded and the error. */
async function streamUntilError(log: SessionLog): Promise<{ seqs: number[]; error: unknown }> {
  const controller = new AbortController();
  const seqs: number[] = [];
  try {
    for await (const event of log.stream("s", { signal: controller.signal })) seqs.push(event.seq);
  } catch (error) {
    return { seqs, error };
  } finally {
    controller.abort();
  }
  throw new Error(`the stream ended without an error after ${seqs.join(",")}`);
}

function sqlite(path: string, sql: string): void {
  const db = new DatabaseSync(path);
  try {
    assert.equal(db.prepare(sql).run().changes, 1);
  } finally {
    db.close();
  }
}

function storeRecords(logger: MemoryLogger): unknown[] {
  return logger.records.map((r) => [r.level, r.message, r.fields?.seq]);
}

Deno.test("sqlite store: a missing row is StoreCorrupt naming the store, session and seq, logged; a stream yields up to it, then fails", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-gap-" });
  const path = `${dir}/sessions.db`;
  const logger = createMemoryLogger();
  const store = SqliteSessionStore.open({ path, logger });
  const { log, dispose } = await fiveEvents(store);
  try {
    const all = await log.read("s");
    sqlite(path, "DELETE FROM session_events WHERE session_id = 's' AND seq = 3");
    const message =
      `Cannot read seq 3 of session "s" from the sqlite store "${path}": the row is missing (the next stored seq is 4)`;
    await assert.rejects(log.read("s"), { code: "StoreCorrupt", message });
    await assert.rejects(log.read("s", { from_seq: 3 }), { code: "StoreCorrupt", message });
    // A typed read keeps its gaps by contract; the hole is not its concern.
    assert.deepStrictEqual(
      (await log.read("s", { types: ["assistant/chunk"] })).map((e) => e.seq),
      [2, 4, 5],
    );
    assert.deepStrictEqual(await store.readJson("s"), all.slice(0, 2).map(toJson));
    await assert.rejects(store.readJson("s", { from_seq: 3 }), { code: "StoreCorrupt", message });
    const { seqs, error } = await streamUntilError(log);
    assert.deepStrictEqual(seqs, [1, 2]);
    assert.deepStrictEqual([(error as { code: string }).code, (error as Error).message], [
      "StoreCorrupt",
      message,
    ]);
    assert.deepStrictEqual(storeRecords(logger).at(-1), ["error", message, 3]);
  } finally {
    await dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: an undecodable payload is StoreCorrupt naming the row, never a bare SyntaxError", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-corrupt-" });
  const path = `${dir}/sessions.db`;
  const logger = createMemoryLogger();
  const store = SqliteSessionStore.open({ path, logger });
  const { log, dispose } = await fiveEvents(store);
  try {
    sqlite(
      path,
      `UPDATE session_events SET payload = '{"kind":' WHERE session_id = 's' AND seq = 4`,
    );
    const message =
      `Cannot read seq 4 of session "s" from the sqlite store "${path}": its payload is not valid JSON`;
    await assert.rejects(log.read("s"), { code: "StoreCorrupt", message });
    await assert.rejects(store.readJson("s", { from_seq: 4 }), { code: "StoreCorrupt", message });
    assert.deepStrictEqual((await store.readJson("s")).map((e) => e.seq), [1, 2, 3]);
    const { seqs, error } = await streamUntilError(log);
    assert.deepStrictEqual([seqs, (error as Error).message], [[1, 2, 3], message]);
    assert.deepStrictEqual(storeRecords(logger).at(-1), ["error", message, 4]);
  } finally {
    await dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jsonl store: a missing or undecodable line is StoreCorrupt naming the file, session and seq, logged; a stream yields up to it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-jsonl-gap-" });
  const logger = createMemoryLogger();
  const store = JsonlSessionStore.open({ dir, logger });
  const { log, dispose } = await fiveEvents(store);
  const file = `${dir}/s.jsonl`;
  try {
    const lines = (await Deno.readTextFile(file)).split("\n");
    await Deno.writeTextFile(file, [...lines.slice(0, 2), ...lines.slice(3)].join("\n"));
    const missing =
      `Cannot read seq 3 of session "s" from the jsonl store "${file}": line 3 holds seq 4`;
    await assert.rejects(log.read("s"), { code: "StoreCorrupt", message: missing });
    // readJson ends a page before the bad line, and a page that starts at it is StoreCorrupt (logged).
    const all = (await Deno.readTextFile(file)).split("\n");
    assert.deepStrictEqual(await store.readJson("s"), [
      { seq: 1, json: all[0] },
      { seq: 2, json: all[1] },
    ]);
    await assert.rejects(store.readJson("s", { from_seq: 3 }), {
      code: "StoreCorrupt",
      message: missing,
    });
    assert.deepStrictEqual(storeRecords(logger).at(-1), ["error", missing, 3]);
    const gap = await streamUntilError(log);
    assert.deepStrictEqual([gap.seqs, (gap.error as Error).message], [[1, 2], missing]);
    assert.deepStrictEqual(storeRecords(logger).at(-1), ["error", missing, 3]);

    await Deno.writeTextFile(file, [...lines.slice(0, 1), '{"id":', ...lines.slice(2)].join("\n"));
    const bad =
      `Cannot read seq 2 of session "s" from the jsonl store "${file}": line 2 is not valid JSON`;
    await assert.rejects(log.read("s"), { code: "StoreCorrupt", message: bad });
    await assert.rejects(store.readJson("s", { from_seq: 2 }), {
      code: "StoreCorrupt",
      message: bad,
    });
    assert.deepStrictEqual((await store.readJson("s")).map((e) => e.seq), [1]);
    const corrupt = await streamUntilError(log);
    assert.deepStrictEqual([corrupt.seqs, (corrupt.error as Error).message], [[1], bad]);
  } finally {
    await dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

function toJson(event: SessionEvent): { seq: number; json: string } {
  return { seq: event.seq, json: JSON.stringify(event) };
}
