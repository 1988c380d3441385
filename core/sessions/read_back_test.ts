/** `readBack`: a log read back from its head, a window of seqs at a time, stopping where the caller stops. */
import assert from "node:assert/strict";
import { type RecordedRead, recordReads } from "../testing.ts";
import { setImmediate } from "node:timers";
import { createContext } from "@terret/hames";
import { SessionLog } from "./session_log.ts";
import { MemorySessionStore } from "./memory_store.ts";
import { readBack } from "./read_back.ts";

/** A session `s` of `head` events: `session/created`, then user messages, a tool call at every seventh seq. */
async function session(head: number): Promise<SessionLog> {
  const log = new SessionLog(createContext({ mode: "test" }), new MemorySessionStore());
  await log.create({ session_id: "s" });
  for (let seq = 2; seq <= head; seq++) {
    await log.append(
      "s",
      seq % 7 === 0
        ? { type: "tool/call", payload: { id: `c${seq}`, name: "Read", args: {} } }
        : { type: "user/message", payload: { content: `m${seq}` } },
    );
  }
  return log;
}

/** The seq ranges of the recorded reads (`to` is Infinity for a read up to the head). */
const ranges = (reads: readonly RecordedRead[]): number[][] =>
  reads.map((read) => [read.from, read.to]);

Deno.test("readBack() yields every seq once, newest window first, each in seq order", async () => {
  const log = await session(30);
  const windows: number[][] = [];
  for await (const events of readBack(log, "s", { window: 7 })) {
    windows.push(events.map((event) => event.seq));
  }
  assert.deepStrictEqual(windows.map((seqs) => [seqs[0], seqs.at(-1)]), [
    [24, 30],
    [17, 23],
    [10, 16],
    [3, 9],
    [1, 2],
  ]);
  assert.deepStrictEqual(windows.reverse().flat(), Array.from({ length: 30 }, (_, i) => i + 1));
});

Deno.test("readBack() with types steps over every seq and yields only those types, empty windows included", async () => {
  const log = await session(30);
  const windows: number[][] = [];
  for await (const events of readBack(log, "s", { types: ["tool/call"], window: 5 })) {
    windows.push(events.map((event) => event.seq));
  }
  // Windows [26, 30], [21, 25], [16, 20], [11, 15], [6, 10], [1, 5].
  assert.deepStrictEqual(windows, [[28], [21], [], [14], [7], []]);
});

Deno.test("readBack() reads no further window once the caller stops, and never past the head it started from", async () => {
  const log = await session(1_200);
  const { sessions, reads } = recordReads(log);
  for await (const events of readBack(sessions, "s")) {
    assert.equal(events.length, 512);
    await log.append("s", { type: "user/message", payload: { content: "later" } });
    break;
  }
  assert.deepStrictEqual(ranges(reads), [[689, 1_200]]);
  const seen: number[] = [];
  for await (const events of readBack(log, "s", { window: 1_000 })) {
    if (seen.length === 0) {
      await log.append("s", { type: "user/message", payload: { content: "late" } });
    }
    seen.push(...events.map((event) => event.seq));
  }
  assert.equal(Math.max(...seen), 1_201);
  assert.equal(seen.length, 1_201);
});

Deno.test("readBack() of an unknown session yields nothing; a bad window and an aborted signal reject", async () => {
  const log = await session(3);
  for await (const _ of readBack(log, "unknown")) assert.fail("an unknown session has no window");
  for (const window of [0, 1.5, Number.NaN, -3]) {
    await assert.rejects(
      readBack(log, "s", { window }).next(),
      new RangeError(`Cannot read a log back: the window must be an integer >= 1, got ${window}`),
    );
  }
  const controller = new AbortController();
  const reason = new Error("stop");
  controller.abort(reason);
  await assert.rejects(readBack(log, "s", { signal: controller.signal }).next(), reason);
});

Deno.test("readBack() gives the event loop a turn before each window after the first, never before the first", async () => {
  const log = await session(40);
  const { sessions, reads } = recordReads(log);
  let readsWhenATaskRan: number | undefined;
  setImmediate(() => readsWhenATaskRan = reads.length);
  const windows: number[] = [];
  for await (const events of readBack(sessions, "s", { window: 10 })) windows.push(events.length);
  assert.deepStrictEqual(windows, [10, 10, 10, 10]);
  // The memory store answers at once: only a turn lets a task queued meanwhile run, and the first comes after the
  // first window, before the second.
  assert.equal(readsWhenATaskRan, 1);
});
