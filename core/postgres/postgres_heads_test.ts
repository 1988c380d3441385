import assert from "node:assert/strict";
import { createContext, createMemoryLogger } from "@terret/hames";
import { SessionLog } from "../sessions/session_log.ts";
import { PostgresSessionStore } from "./postgres_store.ts";
import { KnownHeads } from "./_known_heads.ts";
import { postgresLane } from "../../tests/postgres/cluster.ts";

const lane = await postgresLane();
const url = lane.cluster === undefined ? "" : await lane.cluster.createDatabase("heads_test");

const test = (name: string, fn: () => Promise<void>): void =>
  Deno.test({ name: `postgres store heads: ${name}`, ignore: lane.skip !== undefined, fn });

/** A store and its log, as one `trt serve` process holds them. */
async function node(schema: string): Promise<{ log: SessionLog; close: () => Promise<void> }> {
  const store = await PostgresSessionStore.open({ url, schema, listen: false });
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  return {
    log: new SessionLog(ctx, store),
    close: async () => {
      await ctx.dispose();
      await store.close();
    },
  };
}

function chunk(text: string): { type: string; payload: unknown } {
  return { type: "assistant/chunk", payload: { kind: "text", text } };
}

test("a process whose remembered head is stale (another process appended since) appends at the true head, with no gap", async () => {
  const a = await node("stale"), b = await node("stale");
  try {
    await a.log.create({ session_id: "s" });
    assert.equal((await a.log.append("s", chunk("a1"))).seq, 2); // a remembers head 2
    assert.equal((await b.log.append("s", chunk("b1"))).seq, 3);
    assert.equal((await b.log.append("s", chunk("b2"))).seq, 4);
    // a's next group collides at seq 3, reads the head and runs again.
    assert.equal((await a.log.append("s", chunk("a2"))).seq, 5);
    assert.equal(await a.log.head("s"), 5);
    assert.equal(await b.log.head("s"), 5);
    const events = await b.log.read("s");
    assert.deepStrictEqual(events.map((e) => e.seq), [1, 2, 3, 4, 5]);
    assert.deepStrictEqual(
      events.slice(1).map((e) => (e.payload as { text: string }).text),
      ["a1", "b1", "b2", "a2"],
    );
  } finally {
    await b.close();
    await a.close();
  }
});

test("two processes appending to the same sessions at once get contiguous, unique seqs, each append once", async () => {
  const a = await node("race"), b = await node("race");
  const ids = ["r0", "r1", "r2"];
  try {
    for (const id of ids) await a.log.create({ session_id: id });
    const writers = [a, b].flatMap((n, w) =>
      ids.flatMap((id) =>
        [0, 1].map(async (k) => {
          for (let i = 0; i < 40; i++) await n.log.append(id, chunk(`${w}.${k}.${i}`));
        })
      )
    );
    await Promise.all(writers);
    for (const id of ids) {
      const events = await a.log.read(id);
      assert.deepStrictEqual(
        events.map((e) => e.seq),
        Array.from({ length: 161 }, (_, i) => i + 1),
      );
      const texts = events.slice(1).map((e) => (e.payload as { text: string }).text).sort();
      const expected = [0, 1].flatMap((w) =>
        [0, 1].flatMap((k) => Array.from({ length: 40 }, (_, i) => `${w}.${k}.${i}`))
      ).sort();
      assert.deepStrictEqual(texts, expected);
      assert.equal(await b.log.head(id), 161);
    }
  } finally {
    await b.close();
    await a.close();
  }
});

Deno.test("known heads: remembers the most recently written sessions up to its capacity and forgets on request", () => {
  const heads = new KnownHeads(2);
  heads.set("a", 1);
  heads.set("b", 5);
  heads.set("a", 2); // a is now the most recently written
  heads.set("c", 7); // b, the least recently written, is forgotten
  assert.equal(heads.get("a"), 2);
  assert.equal(heads.get("b"), undefined);
  assert.equal(heads.get("c"), 7);
  heads.forget("c");
  assert.equal(heads.get("c"), undefined);
  assert.equal(heads.size, 1);
});
