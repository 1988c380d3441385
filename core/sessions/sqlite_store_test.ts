import assert from "node:assert/strict";
import { TerretError } from "../errors.ts";
import { createContext } from "@terret/hames";
import { SessionStoreKey } from "./store.ts";
import { SqliteSessionStore } from "./sqlite_store.ts";
import { sqliteStorePlugin } from "./sqlite_store_plugin.ts";
import { SessionLog } from "./session_log.ts";
import { collect, runSessionStoreConformance } from "../../tests/conformance/session_store.ts";

runSessionStoreConformance("sqlite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-" });
  return {
    open: () => Promise.resolve(SqliteSessionStore.open({ path: `${dir}/sessions.db` })),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true, typedList: "exact" });

// The same contract with a head cache of one session: every other head is read from the database again.
runSessionStoreConformance("sqlite, one cached head", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-heads-" });
  return {
    open: () =>
      Promise.resolve(
        SqliteSessionStore.open({ path: `${dir}/sessions.db`, headCacheSessions: 1 }),
      ),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true, typedList: "exact" });

// The same contract read three rows (and, for typed reads, three seqs) per query: every read crosses pages.
runSessionStoreConformance("sqlite, 3-row pages", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-pages-" });
  return {
    open: () =>
      Promise.resolve(SqliteSessionStore.open({ path: `${dir}/sessions.db`, readPageSize: 3 })),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}, { persistent: true, typedList: "exact" });

Deno.test("sqlite store: a typed read scans a bounded window of seqs per query, so a rare type in a long session yields to the loop and can be aborted between pages", async () => {
  const store = SqliteSessionStore.open({ path: ":memory:", readPageSize: 10 });
  try {
    await store.importSession(Array.from({ length: 100 }, (_, i) => ({
      id: `e${i + 1}`,
      session_id: "long",
      seq: i + 1,
      at: "2026-12-02T00:00:00.000Z",
      type: (i + 1) % 50 === 0 ? "x/rare" : "assistant/chunk",
      payload: { n: i + 1 },
      parent_id: null,
    })));
    const seqs = async (options: Parameters<typeof store.read>[1]) =>
      (await store.read("long", options)).map((event) => event.seq);
    assert.deepStrictEqual(await seqs({ types: ["x/rare"] }), [50, 100]);
    assert.deepStrictEqual(await seqs({ types: ["x/rare"], limit: 1 }), [50]);
    assert.deepStrictEqual(await seqs({ types: ["x/rare"], from_seq: 51 }), [100]);
    assert.deepStrictEqual(await seqs({ types: ["x/rare"], to_seq: 99 }), [50]);
    assert.deepStrictEqual(await seqs({ types: ["x/rare"], from_seq: 101 }), []);
    assert.deepStrictEqual(await seqs({ types: [] }), []);
    // Past sixteen types the list is bound as one JSON parameter: the same answer.
    const many = [...Array.from({ length: 16 }, (_, i) => `x/other-${i}`), "x/rare"];
    assert.deepStrictEqual(await seqs({ types: many }), [50, 100]);
    assert.deepStrictEqual(await seqs({ types: many.slice(-16) }), [50, 100]);
    // Windows of forty seqs (four pages of ten), the loop running between them: an abort from a macrotask lands
    // mid-read.
    const controller = new AbortController();
    const turns: number[] = [];
    const tick = (): void => {
      turns.push(turns.length);
      if (turns.length === 2) controller.abort(new Error("enough"));
      else setImmediate(tick);
    };
    setImmediate(tick);
    await assert.rejects(store.read("long", { types: ["x/rare"], signal: controller.signal }), {
      message: "enough",
    });
    assert.deepStrictEqual(turns, [0, 1]);
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: the head cache keeps at most headCacheSessions heads and seqs stay right", async () => {
  const store = SqliteSessionStore.open({ path: ":memory:", headCacheSessions: 3 });
  try {
    const append = (sessionId: string, type: string, expect: "new" | "existing") =>
      store.append({
        id: crypto.randomUUID(),
        session_id: sessionId,
        at: new Date(0).toISOString(),
        type,
        payload: {},
        parent_id: null,
        payload_json: "{}",
        expect,
      });
    for (let i = 0; i < 10; i++) await append(`s-${i}`, "session/created", "new");
    assert.equal(store.cachedHeads, 3);
    // s-0's head was dropped from the cache long ago: its next event still takes seq 2.
    assert.equal((await append("s-0", "turn/start", "existing")).seq, 2);
    for (let i = 0; i < 10; i++) assert.equal(await store.head(`s-${i}`), i === 0 ? 2 : 1);
    assert.equal(store.cachedHeads, 3);
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: a head cache of zero sessions is refused with a clear error", () => {
  assert.throws(
    () => SqliteSessionStore.open({ path: ":memory:", headCacheSessions: 0 }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "StoreFailed" &&
      error.message ===
        'Cannot open the SQLite session store ":memory:": headCacheSessions must be a whole number of at least 1, got 0',
  );
});

Deno.test("sqlite store row: head_cache_sessions sizes the head cache", async () => {
  await using ctx = createContext({ mode: "test" });
  ctx.plugin(sqliteStorePlugin, { path: ":memory:", head_cache_sessions: 2 }, {
    id: "sessions.store",
  });
  await ctx.idle();
  const store = ctx.get(SessionStoreKey);
  assert.ok(store instanceof SqliteSessionStore);
  for (let i = 0; i < 5; i++) {
    await store.append({
      id: crypto.randomUUID(),
      session_id: `s-${i}`,
      at: new Date(0).toISOString(),
      type: "session/created",
      payload: {},
      parent_id: null,
      payload_json: "{}",
      expect: "new",
    });
  }
  assert.equal(store.cachedHeads, 2);
});

Deno.test("sqlite store: the session log registers for remote commits (the data_version poll) only while a stream is open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-poll-" });
  const store = SqliteSessionStore.open({ path: `${dir}/sessions.db`, crossProcessPollMs: 10 });
  const ctx = createContext({ mode: "test" });
  // Counts the live remote-commit registrations the log holds on the real store.
  let registered = 0;
  const register = store.onRemoteCommit.bind(store);
  store.onRemoteCommit = (listener) => {
    registered++;
    const off = register(listener);
    return () => {
      registered--;
      off();
    };
  };
  try {
    const log = new SessionLog(ctx, store);
    await log.create({ session_id: "s" });
    await log.append("s", { type: "assistant/chunk", payload: { kind: "text", text: "a" } });
    assert.equal(registered, 0, "a log nobody streams must not poll");
    const controller = new AbortController();
    const stream = log.stream("s", { signal: controller.signal })[Symbol.asyncIterator]();
    assert.equal((await stream.next()).value?.seq, 1);
    assert.equal(registered, 1, "an open stream listens for remote commits");
    const second = log.stream("s", { signal: controller.signal })[Symbol.asyncIterator]();
    assert.equal((await second.next()).value?.seq, 1);
    assert.equal(registered, 1, "streams share one registration");
    await stream.return?.(undefined);
    assert.equal(registered, 1, "the registration stays while a stream is open");
    await second.return?.(undefined);
    assert.equal(registered, 0, "the last stream closed unregisters");
  } finally {
    await ctx.dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a live tail sees another connection's appends to the same file through the data_version poll", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sqlite-tail-" });
  const a = SqliteSessionStore.open({ path: `${dir}/sessions.db` });
  const b = SqliteSessionStore.open({ path: `${dir}/sessions.db`, crossProcessPollMs: 10 });
  const ctxA = createContext({ mode: "test" }), ctxB = createContext({ mode: "test" });
  try {
    const logA = new SessionLog(ctxA, a), logB = new SessionLog(ctxB, b);
    await logA.create({ session_id: "s" });
    // B appends nothing: once its stream has replayed to the end (an empty read), only the poll can tell it that A
    // committed.
    let caughtUp = false;
    const read = b.read.bind(b);
    b.read = async (...args) => {
      const events = await read(...args);
      if (events.length === 0) caughtUp = true;
      return events;
    };
    const streamed = collect((signal) => logB.stream("s", { signal }), 41);
    for (const deadline = Date.now() + 10_000; !caughtUp;) {
      assert.ok(Date.now() < deadline, "the stream did not replay to the end");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    for (let i = 0; i < 40; i++) {
      await logA.append("s", { type: "assistant/chunk", payload: { kind: "text", text: `${i}` } });
    }
    const events = await streamed;
    assert.deepStrictEqual(events.map((e) => e.seq), Array.from({ length: 41 }, (_, i) => i + 1));
    assert.deepStrictEqual(events, await logA.read("s"));
  } finally {
    await ctxB.dispose();
    await ctxA.dispose();
    await b.close();
    await a.close();
    await Deno.remove(dir, { recursive: true });
  }
});
