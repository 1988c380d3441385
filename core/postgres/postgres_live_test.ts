import assert from "node:assert/strict";
import { createContext, createMemoryLogger, TerretError } from "@terret/hames";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SessionLog } from "../sessions/session_log.ts";
import { PostgresSessionStore } from "./postgres_store.ts";
import { collect } from "../../tests/conformance/session_store.ts";
import { postgresLane } from "../../tests/postgres/cluster.ts";

const lane = await postgresLane();
const url = lane.cluster === undefined ? "" : await lane.cluster.createDatabase("live_test");

const test = (name: string, fn: () => Promise<void>): void =>
  Deno.test({ name: `postgres store: ${name}`, ignore: lane.skip !== undefined, fn });

/** A store and its log, as one `trt serve` process holds them. */
async function node(
  schema: string,
): Promise<{ log: SessionLog; store: PostgresSessionStore; close: () => Promise<void> }> {
  const store = await PostgresSessionStore.open({ url, schema, commitTimeoutMs: 2000 });
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const log = new SessionLog(ctx, store);
  return {
    log,
    store,
    close: async () => {
      await ctx.dispose();
      await store.close();
    },
  };
}

function chunk(text: string): { type: string; payload: unknown } {
  return { type: "assistant/chunk", payload: { kind: "text", text } };
}

async function until(what: string, condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test("a stream on one process tails another process's appends live, with no gap and no duplicate", async () => {
  const a = await node("tail"), b = await node("tail");
  try {
    await a.log.create({ session_id: "s" });
    await a.log.append("s", chunk("before"));
    // B's stream replays seqs 1-2 from the store; once it has read to the end (an empty read), only a notification
    // can tell it about A's appends: B appends nothing itself.
    let caughtUp = false;
    const read = b.store.read.bind(b.store);
    b.store.read = async (...args) => {
      const events = await read(...args);
      if (events.length === 0) caughtUp = true;
      return events;
    };
    const streamed = collect((signal) => b.log.stream("s", { signal }), 402);
    await until("B's stream has replayed to the end", () => caughtUp);
    await Promise.all([0, 1, 2, 3].map(async (w) => {
      for (let i = 0; i < 100; i++) await a.log.append("s", chunk(`${w}.${i}`));
    }));
    const events = await streamed;
    assert.deepStrictEqual(events.map((e) => e.seq), Array.from({ length: 402 }, (_, i) => i + 1));
    assert.deepStrictEqual(events, await a.log.read("s"));
  } finally {
    await b.close();
    await a.close();
  }
});

test("a restart of PostgreSQL mid-run fails in-flight appends clearly, then the store reconnects and nothing is lost or duplicated", async () => {
  const writer = await node("restart"), watcher = await node("restart");
  const acked: SessionEvent[] = [];
  const failures: TerretError[] = [];
  let stop = false;
  let down = false;
  const controller = new AbortController();
  let tail: Promise<void> | undefined;
  try {
    await writer.log.create({ session_id: "s" });
    const streamed: SessionEvent[] = [];
    // The watcher resumes from its last seq when a read fails while PostgreSQL is down, as a socket client does.
    tail = (async () => {
      while (!controller.signal.aborted) {
        try {
          const from_seq = streamed.length + 1;
          for await (
            const event of watcher.log.stream("s", { from_seq, signal: controller.signal })
          ) {
            streamed.push(event);
          }
        } catch (error) {
          assert.ok(error instanceof TerretError && error.code === "StoreFailed", String(error));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    })();
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; !stop; i++) {
        try {
          acked.push(await writer.log.append("s", chunk(`${w}.${i}`)));
        } catch (error) {
          assert.ok(error instanceof TerretError, String(error));
          failures.push(error);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    });
    await until("100 appends are acknowledged", () => acked.length >= 100);
    await lane.cluster!.stop();
    down = true;
    await until("an append fails while PostgreSQL is down", () => failures.length > 0);
    await lane.cluster!.start();
    down = false;
    const before = acked.length;
    await until("100 more appends are acknowledged", () => acked.length >= before + 100);
    stop = true;
    await Promise.all(writers);
    const head = await writer.log.head("s");
    await until("the other process's stream has every event", () => streamed.length === head);
    controller.abort();
    await tail;

    const prefix = `Cannot append to the PostgreSQL session store "postgres://terret@127.0.0.1:${
      lane.cluster!.port
    }/live_test": `;
    for (const failure of failures) {
      assert.equal(failure.code, "StoreFailed");
      assert.ok(failure.message.startsWith(prefix), failure.message);
      assert.ok(!failure.message.includes("s3cret"), failure.message);
    }
    const stored = await writer.log.read("s");
    // Contiguous and unique, every acknowledged append is there as acknowledged, and nothing else was stored.
    assert.deepStrictEqual(stored.map((e) => e.seq), Array.from({ length: head }, (_, i) => i + 1));
    assert.equal(new Set(stored.map((e) => e.id)).size, head);
    assert.deepStrictEqual(stored.slice(1), [...acked].sort((x, y) => x.seq - y.seq));
    assert.deepStrictEqual(streamed, stored);
  } finally {
    stop = true;
    if (down) await lane.cluster!.start();
    controller.abort();
    await tail?.catch(() => {});
    await watcher.close();
    await writer.close();
  }
});
