import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import { MemorySessionStore } from "./memory_store.ts";
import { SessionLog } from "./session_log.ts";
import { SessionProjection } from "./session_projection.ts";

async function setup() {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  // Created before the projection listens, so its first get reads the log.
  await log.create({ session_id: "s1" });
  // Reads of the projection's events (each read of a session also reads its `session/created`, at seq 1).
  let reads = 0;
  const counted = Object.create(log, {
    read: {
      value: (...args: Parameters<typeof log.read>) => {
        if (args[1]?.types !== undefined) reads++;
        return log.read(...args);
      },
    },
  }) as SessionLog;
  const titles = new SessionProjection<string[]>(ctx, counted, {
    types: ["session/titled"],
    initial: (created) => [`created at seq ${created.seq}`],
    fold: (state, event) => [...state, (event.payload as { title: string }).title],
  });
  return { ctx, log, titles, reads: () => reads };
}

Deno.test("SessionProjection folds from the log once, then log-first from session/event", async () => {
  const { ctx, log, titles, reads } = await setup();
  await using _ = ctx;
  await log.append("s1", { type: "session/titled", payload: { title: "one" } });
  assert.deepStrictEqual(await titles.get("s1"), ["created at seq 1", "one"]);
  await log.append("s1", { type: "user/message", payload: { content: "ignored" } });
  await log.append("s1", { type: "session/titled", payload: { title: "two" } });
  assert.deepStrictEqual(await titles.get("s1"), ["created at seq 1", "one", "two"]);
  assert.equal(reads(), 1);
  titles.invalidate("s1");
  assert.deepStrictEqual([titles.cached("s1"), await titles.get("s1"), reads()], [
    false,
    ["created at seq 1", "one", "two"],
    2,
  ]);
});

Deno.test("SessionProjection.peek returns the cached state, current log-first, and never reads the log", async () => {
  const { ctx, log, titles, reads } = await setup();
  await using _ = ctx;
  assert.deepStrictEqual([titles.peek("s1"), reads()], [undefined, 0]);
  await titles.get("s1");
  await log.append("s1", { type: "session/titled", payload: { title: "one" } });
  assert.deepStrictEqual([titles.peek("s1"), reads()], [["created at seq 1", "one"], 1]);
  titles.invalidate("s1");
  assert.deepStrictEqual([titles.peek("s1"), reads()], [undefined, 1]);
});

Deno.test("SessionProjection: an aborted caller leaves the shared read to the others", async () => {
  const { ctx, titles } = await setup();
  await using _ = ctx;
  const controller = new AbortController();
  const aborted = titles.get("s1", { signal: controller.signal });
  const other = titles.get("s1");
  controller.abort(new Error("gone"));
  await assert.rejects(aborted, (error: unknown) => (error as Error).message === "gone");
  assert.deepStrictEqual(await other, ["created at seq 1"]);
  assert.equal(titles.cached("s1"), true);
});

Deno.test("SessionProjection drops a session released from memory, and reads it from the log on its next get", async () => {
  const { ctx, log, titles, reads } = await setup();
  await using _ = ctx;
  await titles.get("s1");
  assert.equal(titles.cached("s1"), true);
  log.release("s1");
  assert.equal(titles.cached("s1"), false);
  assert.deepStrictEqual(await titles.get("s1"), ["created at seq 1"]);
  assert.deepStrictEqual([reads(), titles.cached("s1")], [2, true]);
});

Deno.test("SessionProjection stops listening and drops its cache when disposed", async () => {
  const { ctx, log, titles, reads } = await setup();
  await using _ = ctx;
  await titles.get("s1");
  const listeners = ctx.listenerCount();
  await titles.dispose();
  // Both listeners (appends and releases) are gone.
  assert.deepStrictEqual([titles.size, ctx.listenerCount()], [0, listeners - 2]);
  await log.append("s1", { type: "session/titled", payload: { title: "late" } });
  assert.deepStrictEqual(await titles.get("s1"), ["created at seq 1", "late"]);
  assert.deepStrictEqual([reads(), titles.cached("s1")], [2, false]);
  assert.throws(
    () =>
      new SessionProjection(ctx, log, {
        types: [],
        initial: () => 0,
        fold: (s) => s,
        maxSessions: 0,
      }),
    (error: unknown) =>
      error instanceof RangeError &&
      error.message === "Cannot create a session projection: maxSessions must be at least 1",
  );
});

Deno.test("SessionProjection caches a session created while it listens from its first event, without a read", async () => {
  const { ctx, log, titles, reads } = await setup();
  await using _ = ctx;
  await log.create({ session_id: "s2" });
  assert.equal(titles.cached("s2"), true);
  await log.append("s2", { type: "session/titled", payload: { title: "new" } });
  assert.deepStrictEqual(await titles.get("s2"), ["created at seq 1", "new"]);
  assert.equal(reads(), 0);
});

Deno.test("SessionProjection reads a session as seq 1 and its own types apart, so sparse types are read from their index", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s1" });
  for (let i = 0; i < 5; i++) {
    await log.append("s1", { type: "user/message", payload: { content: `m${i}` } });
  }
  await log.append("s1", { type: "session/titled", payload: { title: "t" } });
  const asked: unknown[] = [];
  const recorded = Object.create(log, {
    read: {
      value: (...args: Parameters<typeof log.read>) => {
        asked.push([args[0], args[1]]);
        return log.read(...args);
      },
    },
  }) as SessionLog;
  const titles = new SessionProjection<string[]>(ctx, recorded, {
    types: ["session/titled"],
    initial: (created) => [`created at seq ${created.seq}`],
    fold: (
      state,
      event,
    ) => [...state, `${(event.payload as { title: string }).title}@${event.seq}`],
  });
  assert.deepStrictEqual(await titles.get("s1"), ["created at seq 1", "t@7"]);
  // A store answers a list of sparse types alone from their index; with `session/created` among them, it would scan.
  assert.deepStrictEqual(asked, [
    ["s1", { to_seq: 1 }],
    ["s1", { types: ["session/titled"], from_seq: 2 }],
  ]);
  asked.length = 0;
  assert.equal(await titles.get("unknown"), undefined);
  assert.deepStrictEqual(asked, [["unknown", { to_seq: 1 }]]);
});
