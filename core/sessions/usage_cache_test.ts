import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import {
  type AppendInput,
  MemorySessionStore,
  rollupUsage,
  type SessionStore,
  SqliteSessionStore,
  type StoreReadOptions,
} from "@terret/core/sessions";
import { SessionLog } from "@terret/core";

/** The memory store, with every `read` it answers recorded: the range asked and how many events came back. */
function recordingStore(
  inner: SessionStore = new MemorySessionStore(),
): { store: SessionStore; reads: { from: number; events: number }[] } {
  const reads: { from: number; events: number }[] = [];
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === "read") {
        return async (id: string, options: StoreReadOptions = {}) => {
          const events = await target.read(id, options);
          reads.push({ from: options.from_seq ?? 1, events: events.length });
          return events;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store, reads };
}

const step = (n: number, input: number, finish = "stop"): AppendInput[] => [
  { type: "step/start", payload: { step: n } },
  {
    type: "step/end",
    payload: {
      step: n,
      usage: { input_tokens: input, output_tokens: 1, cost: 0.5 },
      finish_reason: finish,
    },
  },
];

Deno.test("usage() equals a full rollup at every point and reads nothing its own commits already added", async () => {
  await using ctx = createContext({ mode: "test" });
  const { store, reads } = recordingStore();
  const log = new SessionLog(ctx, store);
  await log.create({ session_id: "s" });
  const batches: AppendInput[][] = [
    step(1, 10),
    [...step(2, 0, "interrupted"), { type: "user/message", payload: { content: "go on" } }],
    [{
      type: "session/titled",
      payload: { title: "T", usage: { input_tokens: 3, output_tokens: 2 } },
    }],
    // A step opened and not closed yet: unknown until its step/end lands.
    [{ type: "step/start", payload: { step: 3 } }],
    [{
      type: "step/end",
      payload: {
        step: 3,
        usage: { input_tokens: 7, output_tokens: 1 },
        finish_reason: "tool_calls",
      },
    }],
  ];
  for (const batch of batches) {
    for (const input of batch) await log.append("s", input);
    reads.length = 0;
    const usage = await log.usage("s");
    assert.deepStrictEqual(reads, [], "the commit feed added every event: nothing is read");
    assert.deepStrictEqual(usage, rollupUsage(await store.read("s")));
  }
  assert.deepStrictEqual(await log.usage("s"), {
    steps: 3,
    unknown_steps: 1,
    utility_calls: 1,
    input_tokens: 20,
    output_tokens: 4,
    cached_tokens: 0,
    cost: 0.5,
  });

  // Another log over the same store (a restart): its first call reads the usage events once; it then follows the
  // store's commits like the first.
  await using other = createContext({ mode: "test" });
  const restarted = new SessionLog(other, store);
  reads.length = 0;
  assert.deepStrictEqual(await restarted.usage("s"), await log.usage("s"));
  assert.deepStrictEqual(reads, [{ from: 1, events: 7 }], "step/start and step/end ×3, the title");
  for (const input of step(4, 100)) await log.append("s", input);
  reads.length = 0;
  const usage = await restarted.usage("s");
  assert.deepStrictEqual(reads, []);
  assert.deepStrictEqual(usage, rollupUsage(await store.read("s")));
});

Deno.test("usage() sees steps another connection appended to a shared SQLite file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using ctx = createContext({ mode: "test" });
    const path = `${dir}/shared.db`;
    const stores = [SqliteSessionStore.open({ path }), SqliteSessionStore.open({ path })];
    const { store, reads } = recordingStore(stores[0]!);
    const mine = new SessionLog(ctx, store);
    const theirs = new SessionLog(ctx, stores[1]!);
    await mine.create({ session_id: "s" });
    for (const input of step(1, 10)) await mine.append("s", input);
    assert.equal((await mine.usage("s")).input_tokens, 10);
    for (const input of step(2, 5)) await theirs.append("s", input);
    for (const input of step(3, 1)) await mine.append("s", input);
    reads.length = 0;
    const usage = await mine.usage("s");
    // Seqs 4 and 5 came from the other connection: the catch-up reads from there, never from the start.
    assert.deepStrictEqual(reads, [{ from: 4, events: 4 }]);
    assert.deepStrictEqual(usage, rollupUsage(await stores[0]!.read("s")));
    assert.equal(usage.input_tokens, 16);
    assert.equal(usage.steps, 3);
    for (const store of stores) await store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("usage() stays exact when its cache evicts and under concurrent calls, and checks its size", async () => {
  await using ctx = createContext({ mode: "test" });
  const store = new MemorySessionStore();
  const log = new SessionLog(ctx, store, { usageCacheSessions: 1 });
  for (const [id, input] of [["a", 1], ["b", 2]] as const) {
    await log.create({ session_id: id });
    for (const item of step(1, input)) await log.append(id, item);
  }
  await using other = createContext({ mode: "test" });
  const cold = new SessionLog(other, store, { usageCacheSessions: 1 });
  for (const sessions of [log, cold]) {
    for (let round = 0; round < 3; round++) {
      const [a1, b1, a2] = await Promise.all([
        sessions.usage("a"),
        sessions.usage("b"),
        sessions.usage("a"),
      ]);
      assert.deepStrictEqual([a1.input_tokens, b1.input_tokens, a2.input_tokens], [1, 2, 1]);
    }
  }
  await assert.rejects(log.usage("../x"), { code: "InvalidSessionId" });
  assert.throws(() => new SessionLog(ctx, store, { usageCacheSessions: 0 }), {
    name: "RangeError",
    message: "Cannot create the session log: usageCacheSessions must be a positive integer, got 0",
  });
});
