/**
 * The `session_store` conformance suite: every store's test file calls {@linkcode runSessionStoreConformance}, so
 * the memory, JSONL and SQLite stores prove the same contract through the sessions service.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createContext, createMemoryLogger, TerretError } from "@terret/hames";
import {
  type SessionEvent,
  SessionEventAppended,
  SessionLog,
  type SessionStore,
} from "@terret/core";
import { digestMessages } from "@terret/core/sessions";
import { SPARSE_EVENT_TYPES } from "../../core/sessions/_sparse_types.ts";

/** How the suite gets a store. */
export interface StoreHarness {
  /** Opens the store; for a persistent store, opening again after `close` sees the same data. */
  open(): Promise<SessionStore>;
  /** Removes whatever the harness created. */
  cleanup(): Promise<void>;
}

type Body = (log: SessionLog, store: SessionStore, harness: StoreHarness) => Promise<void>;

async function withLog(
  make: () => Promise<StoreHarness>,
  body: Body,
  options: { maxPayloadBytes?: number; streamBufferLimit?: number } = {},
): Promise<void> {
  const harness = await make();
  const store = await harness.open();
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const log = new SessionLog(ctx, store, options);
  try {
    await body(log, store, harness);
  } finally {
    await ctx.dispose();
    await store.close();
    await harness.cleanup();
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** Collects `count` events from a stream, failing after `ms`; the stream is aborted once they are in. */
export async function collect(
  open: (signal: AbortSignal) => AsyncIterable<SessionEvent>,
  count: number,
  ms = 10_000,
): Promise<SessionEvent[]> {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort();
  }, ms);
  const out: SessionEvent[] = [];
  try {
    for await (const event of open(controller.signal)) {
      out.push(event);
      if (out.length === count) controller.abort();
    }
  } finally {
    clearTimeout(timer);
  }
  assert.equal(expired, false, `collected ${out.length} of ${count} events before the deadline`);
  return out;
}

function chunk(text: string): { type: string; payload: unknown } {
  return { type: "assistant/chunk", payload: { kind: "text", text } };
}

async function conversation(log: SessionLog, id: string): Promise<void> {
  await log.create({ session_id: id, meta: { purpose: "conformance" } });
  const user = await log.append(id, {
    type: "user/message",
    payload: { content: "Read the file ünïcödé 🚀 \u2028 and say 你好" },
  });
  await log.append(id, { type: "turn/start", payload: {} });
  await log.append(id, chunk("Let me "));
  await log.append(id, chunk("read it."));
  const call = {
    type: "tool_call",
    id: "call_1",
    name: "Read",
    args: { path: "/w/a.txt", n: -0, big: 2 ** 53 - 1 },
  };
  await log.append(id, {
    type: "assistant/message",
    payload: {
      parts: [{ type: "thinking", text: "hmm", signature: "sig==" }, {
        type: "text",
        text: "Let me read it.",
      }, call],
    },
    parent_id: user.id,
  });
  await log.append(id, {
    type: "tool/call",
    payload: { id: "call_1", name: "Read", args: call.args },
  });
  await log.append(id, {
    type: "tool/result",
    payload: {
      id: "call_1",
      name: "Read",
      content: [{ type: "text", text: 'line1\nline2\t"q"' }],
      is_error: false,
    },
  });
  await log.append(id, {
    type: "step/end",
    payload: {
      usage: { input_tokens: 120, output_tokens: 30, cached_tokens: 100, cost: 0.25 },
      finish_reason: "tool_calls",
    },
  });
  await log.append(id, {
    type: "context/injected",
    payload: { content: "steer: be brief", extra: { __proto__: 1 } },
  });
  await log.append(id, {
    type: "step/end",
    payload: { usage: { input_tokens: 200, output_tokens: 5 }, finish_reason: "stop" },
  });
  await log.append(id, {
    type: "assistant/message",
    payload: { parts: [{ type: "text", text: "Done." }] },
  });
}

/**
 * Registers the conformance tests for one store.
 *
 * @param name the store's name in test titles
 * @param make creates a fresh harness per test (its own directory or file)
 * @param options `persistent` adds the restart test (close and reopen); `typedList: "exact"` says the store's
 *   `list({ types })` names exactly the sessions holding those sparse types (the default, `"superset"`, allows more)
 */
export function runSessionStoreConformance(
  name: string,
  make: () => Promise<StoreHarness>,
  options: { readonly persistent: boolean; readonly typedList?: "exact" | "superset" },
): void {
  const test = (
    title: string,
    body: Body,
    options?: { maxPayloadBytes?: number; streamBufferLimit?: number },
  ): void => {
    Deno.test(`${name} store: ${title}`, () => withLog(make, body, options));
  };

  test("seqs are unique and contiguous from 1 under 8 concurrent writers per session and across sessions", async (log) => {
    const sessions = ["alpha", "beta", "gamma"];
    await Promise.all(sessions.map((id) => log.create({ session_id: id })));
    const writer = async (id: string, w: number): Promise<SessionEvent[]> => {
      const out: SessionEvent[] = [];
      for (let i = 0; i < 25; i++) out.push(await log.append(id, chunk(`${id}:${w}:${i}`)));
      return out;
    };
    const results = await Promise.all(
      sessions.flatMap((id) => range(0, 7).map((w) => writer(id, w))),
    );
    for (const id of sessions) {
      const events = await log.read(id);
      assert.deepStrictEqual(events.map((event) => event.seq), range(1, 201));
      assert.equal(new Set(events.map((event) => event.id)).size, 201);
      assert.equal(await log.head(id), 201);
      for (const w of range(0, 7)) {
        const texts = events.filter((event) =>
          (event.payload as { text?: string }).text?.startsWith(`${id}:${w}:`)
        )
          .map((event) => (event.payload as { text: string }).text);
        assert.deepStrictEqual(texts, range(0, 24).map((i) => `${id}:${w}:${i}`));
      }
    }
    const bySeq = new Map(
      (await Promise.all(sessions.map((id) => log.read(id)))).flat().map((e) => [e.id, e]),
    );
    for (const appended of results.flat()) assert.deepStrictEqual(bySeq.get(appended.id), appended);
    assert.deepStrictEqual(await log.list(), ["alpha", "beta", "gamma"]);
  });

  test("list names every session once, in byte order, whatever order they were written in", async (log) => {
    assert.deepStrictEqual(await log.list(), []);
    const ids = ["b", "a.b", "Z9", "a", "0", "a-b", "a_b", "aa", "A"];
    for (const id of ids) await log.create({ session_id: id });
    // Events interleaved across the sessions, so no session's rows are contiguous in the store.
    for (let round = 0; round < 3; round++) {
      for (const id of ids) await log.append(id, chunk(`${id}:${round}`));
    }
    assert.deepStrictEqual(await log.list(), ["0", "A", "Z9", "a", "a-b", "a.b", "a_b", "aa", "b"]);
  });

  test(
    `list by types names every session holding one of them, ${
      options.typedList === "exact" ? "and only those" : "in a superset of them"
    }, sorted`,
    async (log) => {
      const holding: Record<string, { type: string; payload: unknown }[]> = {
        s1: [{
          type: "approval/requested",
          payload: { request_id: "r", call: { id: "c", name: "Bash", args: {} } },
        }],
        s2: [{ type: "input/queued", payload: { kind: "message", content: "go", wake: true } }],
        s3: [chunk("x"), { type: "session/titled", payload: { title: "T" } }, chunk("y")],
        s4: [chunk("only chunks")],
        s0: [],
      };
      for (const [id, events] of Object.entries(holding)) {
        await log.create({ session_id: id });
        for (const event of events) await log.append(id, event);
      }
      const all = ["s0", "s1", "s2", "s3", "s4"];
      assert.deepStrictEqual(await log.list(), all);
      const aborted = AbortSignal.abort(new Error("listing aborted"));
      await assert.rejects(
        log.list({ types: ["input/queued"], signal: aborted }),
        /listing aborted/,
      );
      const lists: [readonly string[], string[]][] = [
        [["approval/requested", "approval/resolved"], ["s1"]],
        [["input/queued"], ["s2"]],
        [["session/titled"], ["s3"]],
        [["input/queued", "session/titled"], ["s2", "s3"]],
        [["session/compacted", "job/started"], []],
        // Not all sparse: a store may answer every session.
        [["assistant/chunk"], ["s3", "s4"]],
        [["session/created"], all],
      ];
      for (const [types, holders] of lists) {
        const listed = await log.list({ types });
        assert.deepStrictEqual(listed, [...listed].sort(), `${types} sorted`);
        assert.equal(new Set(listed).size, listed.length, `${types} once each`);
        for (const id of holders) assert.ok(listed.includes(id), `${types} names ${id}`);
        for (const id of listed) assert.ok(all.includes(id), `${types} names only sessions`);
        if (
          options.typedList === "exact" && types.every((type) => SPARSE_EVENT_TYPES.includes(type))
        ) {
          assert.deepStrictEqual(listed, holders, `${types} exactly`);
        }
      }
    },
  );

  test(
    `list pages by after and limit: ascending, each id once, ${
      options.typedList === "exact"
        ? "typed pages naming exactly the holders"
        : "typed pages a superset"
    }, bad bounds rejected`,
    async (log, store) => {
      // Written in no particular order; byte order puts "-" < "." < digits < upper case < "_" < lower case.
      const ids = [
        "b",
        "a-10",
        "Z",
        "a-1",
        "zz",
        "a.b",
        "0",
        "B",
        "a_b",
        "a-2",
        "c0",
        "a",
        "z.",
        "9",
        "ab",
        "b-1",
        "A",
        "a-",
        "z-",
        "b_1",
        "aa",
        "b.1",
        "ba",
        "c",
        "z",
      ];
      const titled = ["9", "Z", "a-10", "a-2", "a_b", "b", "b.1", "c", "z-", "zz"];
      const queued = ["a", "ba", "a-2"];
      for (const id of ids) {
        await log.create({ session_id: id });
        await log.append(id, chunk(id));
        if (titled.includes(id)) {
          await log.append(id, { type: "session/titled", payload: { title: id } });
        }
        if (queued.includes(id)) {
          await log.append(id, {
            type: "input/queued",
            payload: { kind: "message", content: id, wake: true },
          });
        }
      }
      const all = [...ids].sort();
      assert.equal(all.length, 25);
      assert.deepStrictEqual(all.slice(0, 8), ["0", "9", "A", "B", "Z", "a", "a-", "a-1"]);
      assert.deepStrictEqual(await store.list(), all);

      // Pages the list by `limit`, each page's last id the next page's `after`, until a short page; checks each page
      // against the contract (ascending, after the bound, at most `limit`, every holder in its range, none missed).
      const paged = async (limit: number, types?: readonly string[]): Promise<string[]> => {
        const holders = types === undefined
          ? all
          : all.filter((id) =>
            (types.includes("session/titled") && titled.includes(id)) ||
            (types.includes("input/queued") && queued.includes(id)) ||
            types.includes("assistant/chunk")
          );
        const visited: string[] = [];
        let after: string | undefined;
        for (let pages = 0;; pages++) {
          assert.ok(pages <= all.length, `${types ?? "all"} by ${limit}: paging ends`);
          const page = await store.list({
            limit,
            ...(after === undefined ? {} : { after }),
            ...(types === undefined ? {} : { types }),
          });
          const what = `${types ?? "all"} by ${limit} after ${after ?? "(none)"}`;
          assert.ok(page.length <= limit, `${what}: at most ${limit}, got ${page}`);
          assert.deepStrictEqual(page, [...new Set(page)].sort(), `${what}: ascending, once each`);
          for (const id of page) {
            assert.ok(after === undefined || id > after, `${what}: ${id} is after the bound`);
            assert.ok(all.includes(id), `${what}: ${id} is a session`);
          }
          const last = page.at(-1);
          const end = page.length < limit ? undefined : last;
          for (const id of holders) {
            if ((after === undefined || id > after) && (end === undefined || id <= end)) {
              assert.ok(page.includes(id), `${what}: holder ${id} is in the page ${page}`);
            }
          }
          visited.push(...page);
          if (page.length < limit) break;
          after = last;
        }
        assert.deepStrictEqual(visited, [...new Set(visited)].sort(), "pages do not overlap");
        for (const id of holders) assert.ok(visited.includes(id), `paging visits ${id}`);
        if (types === undefined) assert.deepStrictEqual(visited, all);
        return visited;
      };
      for (const limit of [1, 2, 7, 25, 26, 1000]) assert.deepStrictEqual(await paged(limit), all);

      // The bound: an existing id is excluded, any string bounds (ids or not), past the last is empty.
      const after = (bound: string) => all.filter((id) => id > bound);
      assert.deepStrictEqual(await store.list({ after: "a-1" }), after("a-1"));
      assert.equal((await store.list({ after: "a-1" }))[0], "a-10");
      assert.deepStrictEqual(await store.list({ after: "a-1", limit: 3 }), ["a-10", "a-2", "a.b"]);
      assert.deepStrictEqual(await store.list({ after: "0" }), all.slice(1));
      assert.deepStrictEqual(await store.list({ after: "" }), all);
      assert.deepStrictEqual(await store.list({ after: "!", limit: 2 }), ["0", "9"]);
      for (const bound of ["a-1 ", "a-1\0", "a/", "a-\u00e9", "_", "Z9"]) {
        assert.deepStrictEqual(await store.list({ after: bound }), after(bound), `after ${bound}`);
      }
      assert.deepStrictEqual(await store.list({ after: "zz" }), []);
      assert.deepStrictEqual(await store.list({ after: "zzz", limit: 5 }), []);
      assert.deepStrictEqual(await store.list({ after: "\u00e9" }), []);

      // Typed pages: every holder once; an exact store names exactly them.
      for (
        const types of [["session/titled"], ["input/queued"], ["session/titled", "input/queued"]]
      ) {
        const holders = all.filter((id) =>
          (types.includes("session/titled") && titled.includes(id)) ||
          (types.includes("input/queued") && queued.includes(id))
        );
        for (const limit of [1, 2, 3, 7, 100]) {
          const visited = await paged(limit, types);
          if (options.typedList === "exact") {
            assert.deepStrictEqual(visited, holders, `${types} by ${limit}`);
          }
        }
        const bounded = await store.list({ types, after: "a-10", limit: 2 });
        if (options.typedList === "exact") {
          assert.deepStrictEqual(bounded, holders.filter((id) => id > "a-10").slice(0, 2));
        }
        assert.ok(bounded.every((id) => id > "a-10"), `${types} after a-10: ${bounded}`);
        assert.deepStrictEqual(await store.list({ types, after: "zz" }), []);
      }
      // A type outside the sparse ones: a superset at most, every holder (all sessions) still visited once.
      for (const limit of [1, 7]) {
        assert.deepStrictEqual(await paged(limit, ["assistant/chunk"]), all);
      }

      // Bad bounds reject (a promise, not a throw) and list nothing; the store is unharmed.
      const refused = async (
        options: Record<string, unknown>,
        kind: typeof RangeError | typeof TypeError,
        message: string,
      ): Promise<void> => {
        let pending: Promise<string[]> | undefined;
        assert.doesNotThrow(() => {
          pending = store.list(options as never);
          pending.catch(() => {});
        }, `${String(options.limit)}, ${String(options.after)}: rejects instead of throwing`);
        await assert.rejects(pending!, (error: unknown) => {
          assert.ok(error instanceof kind, `${String(error)} is a ${kind.name}`);
          assert.equal((error as Error).message, message);
          return true;
        });
      };
      for (const limit of [0, -1, 1.5, NaN, Infinity, 2 ** 53, "3", null]) {
        const message = `Cannot list sessions: limit must be a positive integer, got ${limit}`;
        await refused({ limit }, RangeError, message);
        await refused({ limit, types: ["session/titled"], after: "a" }, RangeError, message);
      }
      for (
        const [bound, got] of [[5, "number"], [null, "null"], [["a"], "an array"]] as const
      ) {
        const message = `Cannot list sessions: after must be a string, got ${got}`;
        await refused({ after: bound }, TypeError, message);
        await refused({ after: bound, types: ["session/titled"], limit: 2 }, TypeError, message);
      }
      assert.deepStrictEqual(await store.list(), all);
      assert.deepStrictEqual(await store.list({ limit: 1 }), ["0"]);
      assert.equal((await log.append("a", chunk("after the refusals"))).seq, 4);
    },
  );

  test("concurrent creates of one id: exactly one wins, the others get SessionExists", async (log) => {
    const outcomes = await Promise.allSettled(
      range(1, 8).map(() => log.create({ session_id: "same" })),
    );
    assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
    const errors = outcomes.flatMap((o) =>
      o.status === "rejected" ? [o.reason as TerretError] : []
    );
    assert.deepStrictEqual(
      errors.map((e) => [e.code, e.message]),
      range(1, 7).map(() => ["SessionExists", 'Cannot create session "same": it already exists']),
    );
    assert.equal(await log.head("same"), 1);
  });

  test("read(from_seq) equals the tail of a full read; to_seq, limit and types narrow it", async (log) => {
    await log.create({ session_id: "s" });
    for (let i = 0; i < 29; i++) {
      await log.append(
        "s",
        i % 3 === 0 ? { type: "user/message", payload: { content: `u${i}` } } : chunk(`c${i}`),
      );
    }
    const full = await log.read("s");
    assert.equal(full.length, 30);
    for (const from of [1, 2, 15, 30, 31, 40]) {
      assert.deepStrictEqual(await log.read("s", { from_seq: from }), full.slice(from - 1));
    }
    assert.deepStrictEqual(await log.read("s", { from_seq: 5, to_seq: 9 }), full.slice(4, 9));
    assert.deepStrictEqual(await log.read("s", { from_seq: 5, limit: 3 }), full.slice(4, 7));
    assert.deepStrictEqual(
      (await log.read("s", { types: ["user/message"], from_seq: 3 })).map((e) => e.seq),
      [5, 8, 11, 14, 17, 20, 23, 26, 29],
    );
    assert.deepStrictEqual(await log.read("nobody"), []);
    await assert.rejects(log.read("s", { from_seq: 0 }), {
      name: "RangeError",
      message: "Cannot read a session: from_seq must be a positive integer, got 0",
    });
  });

  test("typed reads of sparse types, of other types and of a mix equal a filtered full read, in every range", async (log) => {
    // The sparse types (input, title, compaction, policy, message and steer events, among others) may be served from
    // an index of their own; every other list is filtered from the session's events. Both must give the same answer.
    const kinds: { type: string; payload: unknown }[] = [
      { type: "session/compacted", payload: { summary: "so far" } },
      chunk("a"),
      { type: "user/message", payload: { content: "go" } },
      { type: "input/queued", payload: { kind: "message", content: "go", wake: true } },
      { type: "tool/call", payload: { id: "c", name: "Read", args: {} } },
      { type: "context/injected", payload: { content: "steer" } },
      { type: "session/titled", payload: { title: "T" } },
      chunk("b"),
      { type: "policy/updated", payload: { allow: ["Read"] } },
      { type: "step/start", payload: {} },
      { type: "turn/end", payload: { status: "completed" } },
    ];
    for (const [session, phase] of [["p", 0], ["q", 5]] as const) {
      await log.create({ session_id: session });
      for (let i = 0; i < 70; i++) {
        await log.append(session, kinds[(i * 7 + phase) % kinds.length]!);
      }
    }
    const lists = [
      ["session/compacted"],
      ["session/compacted", "job/ended"],
      ["user/message", "context/injected"],
      ["input/queued", "session/titled", "policy/updated"],
      ["user/message", "assistant/chunk"],
      ["step/start"],
      ["tool/call", "turn/end"],
      ["session/created"],
      ["nothing/here"],
    ];
    const ranges = [
      {},
      { from_seq: 9 },
      { to_seq: 40 },
      { from_seq: 10, to_seq: 55, limit: 4 },
      {
        limit: 1,
      },
      { from_seq: 71 },
      { from_seq: 72 },
    ];
    for (const session of ["p", "q"]) {
      const full = await log.read(session);
      assert.equal(full.length, 71);
      for (const types of lists) {
        for (const range of ranges) {
          const { from_seq = 1, to_seq = Infinity, limit = Infinity } = range as {
            from_seq?: number;
            to_seq?: number;
            limit?: number;
          };
          const expected = full.filter((event) =>
            types.includes(event.type) && event.seq >= from_seq && event.seq <= to_seq
          ).slice(0, limit);
          assert.deepStrictEqual(
            await log.read(session, { ...range, types }),
            expected,
            `${session} ${types.join("+")} ${JSON.stringify(range)}`,
          );
        }
      }
    }
  });

  test("stream from an arbitrary seq yields exactly the events of a live tail from that point", async (log) => {
    await log.create({ session_id: "s" });
    for (let i = 0; i < 9; i++) await log.append("s", chunk(`before ${i}`));
    const live = collect((signal) => log.stream("s", { from_seq: 11, signal }), 20);
    await Promise.all(
      range(0, 3).map(async (w) => {
        for (let i = 0; i < 5; i++) await log.append("s", chunk(`live ${w}.${i}`));
      }),
    );
    const tail = await live;
    const replay = await collect((signal) => log.stream("s", { from_seq: 11, signal }), 20);
    assert.deepStrictEqual(tail.map((e) => e.seq), range(11, 30));
    assert.deepStrictEqual(replay, tail);
    assert.deepStrictEqual(replay, await log.read("s", { from_seq: 11 }));
  });

  test("stream replay racing concurrent appends has no gap and no duplicate", async (log) => {
    await log.create({ session_id: "s" });
    for (let i = 0; i < 1499; i++) void log.append("s", chunk(`pre ${i}`));
    const streamed = collect((signal) => log.stream("s", { from_seq: 1, signal }), 3000);
    const racing = range(0, 1499).map((i) => log.append("s", chunk(`race ${i}`)));
    await Promise.all(racing);
    const events = await streamed;
    assert.deepStrictEqual(events.map((e) => e.seq), range(1, 3000));
    assert.deepStrictEqual(events, await log.read("s"));
  });

  test("a replay longer than one store page gives the event loop a turn between pages", async (log) => {
    await log.create({ session_id: "long" });
    await Promise.all(range(0, 2499).map((i) => log.append("long", chunk(`${i}`))));
    // A macrotask chain beside the replay: it can only advance when the replay lets the loop turn.
    let turns = 0;
    let running = true;
    const turn = (): void => {
      turns++;
      if (running) setImmediate(turn);
    };
    setImmediate(turn);
    let last = 0;
    for await (const event of log.stream("long")) {
      if (event.seq !== last + 1) throw new Error(`seq ${event.seq} after ${last}`);
      last = event.seq;
      if (last === 2500) break;
    }
    running = false;
    await new Promise((resume) => setImmediate(resume));
    // 2,500 events are three pages of 1,000: the loop turned at least between each two.
    assert.ok(turns >= 2, `the loop turned ${turns} times during the replay`);
  });

  test(
    "a stream whose consumer falls behind its bounded buffer catches up from the store and loses nothing",
    async (log) => {
      await log.create({ session_id: "s" });
      await log.append("s", chunk("stored"));
      const controller = new AbortController();
      const stream = log.stream("s", { signal: controller.signal })[Symbol.asyncIterator]();
      try {
        assert.deepStrictEqual(
          [(await stream.next()).value?.seq, (await stream.next()).value?.seq],
          [1, 2],
        );
        const waiting = stream.next();
        await log.append("s", chunk("live"));
        assert.equal((await waiting).value?.seq, 3);
        // Not pulling: 20 commits overflow the buffer of 4, which is dropped; the stream reads them back from the store.
        for (let i = 0; i < 20; i++) await log.append("s", chunk(`burst ${i}`));
        const rest: SessionEvent[] = [];
        for (let i = 0; i < 20; i++) rest.push((await stream.next()).value as SessionEvent);
        assert.deepStrictEqual(rest, await log.read("s", { from_seq: 4 }));
        assert.deepStrictEqual(rest.map((e) => e.seq), range(4, 23));
      } finally {
        controller.abort();
        await stream.return?.();
      }
    },
    { streamBufferLimit: 4 },
  );

  test(
    "streamJson yields each event's envelope JSON in batches, replayed and live, equal to its JSON.stringify",
    async (log, store) => {
      await conversation(log, "s");
      const controller = new AbortController();
      const seen: { seq: number; json: string }[] = [];
      const done = (async () => {
        for await (const batch of log.streamJson("s", { from_seq: 3, signal: controller.signal })) {
          assert.ok(batch.length > 0, "an empty batch");
          seen.push(...batch);
          if (batch.at(-1)!.seq === 14) controller.abort();
        }
      })();
      await log.append("s", chunk("live one"));
      await log.append("s", chunk("live two"));
      await done;
      const events = await log.read("s", { from_seq: 3 });
      assert.deepStrictEqual(seen, events.map((e) => ({ seq: e.seq, json: JSON.stringify(e) })));
      if (store.readJson !== undefined) {
        const all = (await log.read("s")).map((e) => ({ seq: e.seq, json: JSON.stringify(e) }));
        assert.deepStrictEqual(await store.readJson("s", { from_seq: 2, max_bytes: 1 }), [all[1]]);
        assert.deepStrictEqual(
          await store.readJson("s", { from_seq: 2, limit: 3 }),
          all.slice(1, 4),
        );
        assert.deepStrictEqual(await store.readJson("s"), all);
        assert.deepStrictEqual(await store.readJson("s", { from_seq: 15 }), []);
      }
    },
  );

  test(
    "readJson gives every store's events as their JSON.stringify: imported and appended, escapes and non-ASCII text, paged by bytes and count",
    async (log, store) => {
      assert.ok(store.readJson !== undefined, `the ${store.kind} store has no readJson`);
      const text = 'quote " backslash \\ newline \n nul \u0000 line separator \u2028 é ✓ 🌩';
      await store.importSession([
        {
          id: "e1",
          session_id: "imp",
          seq: 1,
          at: "2026-01-01T00:00:00.000Z",
          type: "session/created",
          payload: { meta: { agent_id: "imp" } },
          parent_id: null,
        },
        {
          id: "e2",
          session_id: "imp",
          seq: 2,
          at: "2026-01-01T00:00:01.000Z",
          type: "assistant/chunk",
          payload: { kind: "text", text, n: 1.5, list: [true, null, -0.25] },
          parent_id: "e1",
        },
      ]);
      await log.append("imp", chunk(text));
      await log.append("imp", {
        type: "assistant/message",
        payload: { parts: [{ type: "text", text }] },
      });
      const expected = (await log.read("imp")).map((e) => ({
        seq: e.seq,
        json: JSON.stringify(e),
      }));
      assert.strictEqual(expected.length, 4);
      assert.deepStrictEqual(await store.readJson("imp"), expected);
      assert.deepStrictEqual(await store.readJson("imp"), expected, "a second read differs");
      // Pages: max_bytes stops once it is reached (at least one event), limit counts events, from_seq starts.
      const first = expected[0]!.json.length;
      assert.deepStrictEqual(
        await store.readJson("imp", { max_bytes: first }),
        expected.slice(0, 1),
      );
      assert.deepStrictEqual(
        await store.readJson("imp", { max_bytes: first + 1 }),
        expected.slice(0, 2),
      );
      assert.deepStrictEqual(
        await store.readJson("imp", { from_seq: 3, limit: 1 }),
        expected.slice(2, 3),
      );
      assert.deepStrictEqual(await store.readJson("imp", { from_seq: 5 }), []);
      assert.deepStrictEqual(await store.readJson("imp", { limit: 0 }), []);
      assert.deepStrictEqual(await store.readJson("nobody"), []);
      await assert.rejects(
        store.readJson("imp", { from_seq: 0 }),
        {
          name: "RangeError",
          message: "Cannot read a session: from_seq must be a positive integer, got 0",
        },
      );
    },
  );

  test("a stream ends when its signal aborts, also while waiting for live events", async (log) => {
    await log.create({ session_id: "s" });
    await log.append("s", chunk("a"));
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const event of log.stream("s", { signal: controller.signal })) {
      seen.push(event.seq);
      if (event.seq === 2) queueMicrotask(() => controller.abort());
    }
    assert.deepStrictEqual(seen, [1, 2]);
  });

  test("fork copies events up to the boundary under a new id, then session/forked", async (log) => {
    await conversation(log, "src");
    const source = await log.read("src");
    const forked = await log.fork("src", { boundary_seq: 7, session_id: "child" });
    const fork = await log.read("child");
    assert.equal(fork.length, 8);
    fork.slice(0, 7).forEach((event, i) => {
      const original = source[i]!;
      assert.deepStrictEqual(
        [event.seq, event.type, event.at, event.payload, event.session_id],
        [original.seq, original.type, original.at, original.payload, "child"],
      );
      assert.notEqual(event.id, original.id);
    });
    assert.equal(source[5]!.parent_id, source[1]!.id);
    assert.equal(fork[5]!.parent_id, fork[1]!.id);
    assert.deepStrictEqual(fork[7], forked);
    assert.deepStrictEqual([forked.seq, forked.type, forked.payload, forked.parent_id], [
      8,
      "session/forked",
      { source_session_id: "src", boundary_seq: 7 },
      source[6]!.id,
    ]);
    assert.deepStrictEqual(
      await log.deriveMessages("child"),
      await log.deriveMessages("src", { upto: 7 }),
    );
    assert.equal((await log.append("child", chunk("more"))).seq, 9);
    assert.deepStrictEqual(await log.read("src"), source);
    await assert.rejects(log.fork("src", { boundary_seq: 99 }), {
      code: "InvalidBoundary",
      message: 'Cannot fork session "src" at seq 99: it has 12 events up to there',
    });
    await assert.rejects(log.fork("src", { boundary_seq: 2, session_id: "child" }), {
      code: "SessionExists",
      message: 'Cannot create session "child": it already exists',
    });
  });

  test("derive_messages projects the model history and never a chunk; usage rolls up step/end", async (log) => {
    await conversation(log, "s");
    const messages = await log.deriveMessages("s");
    assert.deepStrictEqual(messages.map((m) => m.role), [
      "user",
      "assistant",
      "tool",
      "user",
      "assistant",
    ]);
    assert.deepStrictEqual(messages[2], {
      role: "tool",
      parts: [{
        type: "tool_result",
        id: "call_1",
        name: "Read",
        content: [{ type: "text", text: 'line1\nline2\t"q"' }],
        is_error: false,
      }],
    });
    assert.deepStrictEqual(await log.deriveMessages("s", { upto: 6 }), messages.slice(0, 2));
    assert.deepStrictEqual(await log.usage("s"), {
      steps: 2,
      unknown_steps: 0,
      utility_calls: 0,
      input_tokens: 320,
      output_tokens: 35,
      cached_tokens: 100,
      cost: 0.25,
    });
  });

  test(
    "session/event is emitted once per append, in seq order, after the event is durable",
    async (log, store) => {
      await log.create({ session_id: "s" });
      const ctxEvents: number[] = [];
      const durable: Promise<boolean>[] = [];
      const listenerCtx = createContext({ mode: "test" });
      const probe = new SessionLog(listenerCtx, store);
      listenerCtx.on(SessionEventAppended, (event) => {
        ctxEvents.push(event.seq);
        durable.push(
          store.read("s", { from_seq: event.seq, limit: 1 }).then((got) => got[0]?.id === event.id),
        );
      });
      await Promise.all(range(0, 9).map((i) => log.append("s", chunk(`${i}`))));
      assert.deepStrictEqual(ctxEvents, range(2, 11));
      assert.deepStrictEqual(await Promise.all(durable), range(2, 11).map(() => true));
      void probe;
      await listenerCtx.dispose();
    },
  );

  test("append refuses an unknown session, a reserved type and a bad session id", async (log) => {
    await assert.rejects(log.append("ghost", chunk("x")), {
      code: "SessionNotFound",
      message: 'Cannot append to session "ghost": no such session',
    });
    await log.create({ session_id: "s" });
    await assert.rejects(log.append("s", { type: "session/created", payload: {} }), {
      code: "ReservedEventType",
      message: 'Cannot append "session/created" to session "s": only create writes it',
    });
    await assert.rejects(log.append("../etc", chunk("x")), {
      code: "InvalidSessionId",
      message: 'Cannot use session id "../etc": it must match /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/',
    });
    assert.deepStrictEqual(await log.list(), ["s"]);
  });

  test("bad input is refused with a clear error and nothing is appended", async (log) => {
    await log.create({ session_id: "s" });
    await log.append("s", chunk("ok"));
    const before = await log.read("s");
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const cases: [unknown, string, string, string][] = [
      [
        { type: "user/message", payload: { content: "bad \ud800 surrogate" } },
        "InvalidPayload",
        "user/message",
        "payload.content contains a lone surrogate (invalid UTF-8)",
      ],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: { ["k\udc00"]: 1 } } },
        "InvalidPayload",
        "tool/call",
        "payload.args.k\udc00 has a key with a lone surrogate (invalid UTF-8)",
      ],
      [
        { type: "user/message", payload: { content: "x".repeat(50 * 1024 * 1024) } },
        "PayloadTooLarge",
        "user/message",
        `the payload is more than the ${16 * 1024 * 1024}-byte cap`,
      ],
      [{ type: "agent/unknown", payload: {} }, "UnknownEventType", "", ""],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: { fn: () => 1 } } },
        "InvalidPayload",
        "tool/call",
        "payload.args.fn is a function (not JSON)",
      ],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: cycle } },
        "InvalidPayload",
        "tool/call",
        "payload.args.self is a cycle (not JSON)",
      ],
      [
        {
          type: "step/end",
          payload: { usage: { input_tokens: NaN, output_tokens: 1 }, finish_reason: "stop" },
        },
        "InvalidPayload",
        "step/end",
        "payload.usage.input_tokens is NaN (not JSON)",
      ],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: { n: 10n } } },
        "InvalidPayload",
        "tool/call",
        "payload.args.n is a bigint (not JSON)",
      ],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: { when: new Date(0) } } },
        "InvalidPayload",
        "tool/call",
        "payload.args.when is a Date (not a plain JSON object)",
      ],
      [
        { type: "tool/call", payload: { id: "c", name: "X", args: { list: [1, undefined] } } },
        "InvalidPayload",
        "tool/call",
        "payload.args.list[1] is undefined (not JSON)",
      ],
      [
        { type: "tool/result", payload: { id: "c", name: "X", content: "x" } },
        "InvalidPayload",
        "",
        "",
      ],
    ];
    for (const [input, code, type, detail] of cases) {
      const message = code === "UnknownEventType"
        ? 'Cannot append "agent/unknown" to session "s": unknown event type (a plugin adds one with sessions.registerEventType)'
        : type === ""
        ? 'Cannot append "tool/result" to session "s": the payload breaks its schema: payload.is_error: Invalid input: expected boolean, received undefined'
        : `Cannot append "${type}": ${detail}`;
      await assert.rejects(log.append("s", input as never), (error: unknown) => {
        assert.ok(error instanceof TerretError);
        assert.deepStrictEqual([error.code, error.message], [code, message]);
        return true;
      });
    }
    assert.deepStrictEqual(await log.read("s"), before);
  });

  test("a configured payload cap refuses what is over it and accepts what fits", async (log) => {
    await log.create({ session_id: "s" });
    await assert.rejects(
      log.append("s", { type: "user/message", payload: { content: "é".repeat(2100) } }),
      {
        code: "PayloadTooLarge",
        message: 'Cannot append "user/message": the payload is 4214 bytes, over the 4096-byte cap',
      },
    );
    const fits = await log.append("s", {
      type: "user/message",
      payload: { content: "é".repeat(2030) },
    });
    assert.equal(fits.seq, 2);
    assert.equal(await log.head("s"), 2);
  }, { maxPayloadBytes: 4096 });

  Deno.test({
    name:
      `${name} store: restart (close and reopen) yields byte-identical events and derived context`,
    ignore: !options.persistent,
    fn: () => restart(make),
  });
}

async function restart(make: () => Promise<StoreHarness>): Promise<void> {
  const harness = await make();
  try {
    let store = await harness.open();
    let ctx = createContext({ mode: "test" });
    let log = new SessionLog(ctx, store);
    await conversation(log, "s");
    const messages = structuredClone(await log.deriveMessages("s"));
    const derived = digestMessages(messages);
    const events = JSON.stringify(await log.read("s"));
    const usage = await log.usage("s");
    await ctx.dispose();
    await store.close();
    store = await harness.open();
    ctx = createContext({ mode: "test" });
    log = new SessionLog(ctx, store);
    assert.equal(digestMessages(await log.deriveMessages("s")), derived);
    assert.equal(JSON.stringify(await log.read("s")), events);
    assert.deepStrictEqual(await log.deriveMessages("s"), messages);
    assert.deepStrictEqual(await log.usage("s"), usage);
    assert.equal((await log.append("s", chunk("after restart"))).seq, 13);
    await log.assertInvariant(messages, "s", { upto: 12 });
    await ctx.dispose();
    await store.close();
  } finally {
    await harness.cleanup();
  }
}
