/**
 * The boot sweeps (approvals, queued-input recovery, lost jobs) read each session by sparse types only (the stores
 * index them), so a host's start costs the sweeps' matches and not every event it ever stored. A session that has
 * asked for approval is folded whole by the approvals sweep, and only that one. Each sweep gives the event loop a
 * turn between sessions, so a host with thousands of them serves its sockets while it sweeps.
 */
import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { z } from "zod";
import { type Context, createMemoryLogger, definePlugin } from "@terret/hames";
import { AgentRegistry, ApprovalsKey, type ApprovalsService, type Sessions } from "@terret/core";
import {
  type SessionEvent,
  SessionStoreKey,
  SqliteSessionStore,
  type StoreListOptions,
  type StoreReadOptions,
} from "@terret/core/sessions";
import { createAgentStack, scriptedAdapter } from "@terret/core/testing";
import { reportLostJobs } from "../exec/process/_lost_jobs.ts";
import { recoverQueuedInput } from "../core/agents/_recover_input.ts";
import { allSparse } from "../core/sessions/_sparse_types.ts";

/** One read the store served: the session and the options. */
interface Read {
  readonly session: string;
  readonly options: StoreReadOptions;
}

/** A SQLite store row that records every read (and calls `onRead` with it), and the types of every list. */
function recordingStore(
  path: string,
  reads: Read[],
  onRead: (read: Read) => void = () => {},
  lists?: (readonly string[])[],
) {
  return definePlugin({
    name: "recording-sqlite-store",
    description: "The SQLite store, recording the reads it serves",
    provides: [SessionStoreKey],
    config: z.object({}),
    permissions: () => ({}),
    apply(ctx: Context): void {
      const store = SqliteSessionStore.open({ path });
      ctx.effect(() => () => store.close(), "close the recording store");
      ctx.provide(
        SessionStoreKey,
        new Proxy(store, {
          get(target, key) {
            if (key === "list") {
              return (options: StoreListOptions = {}) => {
                lists?.push(options.types ?? []);
                return target.list(options);
              };
            }
            if (key === "read") {
              return (session: string, options: StoreReadOptions = {}) => {
                const read = { session, options };
                reads.push(read);
                onRead(read);
                return target.read(session, options);
              };
            }
            const value = Reflect.get(target, key, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
      );
    },
  });
}

/** A session of three finished turns, each a user message, a tool call and its result. */
function plainSession(id: string): SessionEvent[] {
  const types: [string, unknown][] = [["session/created", { meta: { agent_id: id } }]];
  for (let turn = 0; turn < 3; turn++) {
    const call = `call_${turn}`;
    types.push(
      ["turn/start", { agent_id: id }],
      ["step/start", { step: 1 }],
      ["user/message", { content: `Turn ${turn}` }],
      ["assistant/message", { parts: [{ type: "tool_call", id: call, name: "Read", args: {} }] }],
      ["tool/call", { id: call, name: "Read", args: {} }],
      ["tool/result", { id: call, name: "Read", content: "text", is_error: false }],
      ["step/end", {
        step: 1,
        usage: { input_tokens: 1, output_tokens: 1 },
        finish_reason: "stop",
      }],
      ["turn/end", { status: "completed" }],
    );
  }
  return types.map(([type, payload], i) => ({
    id: `${id}-${i + 1}`,
    session_id: id,
    seq: i + 1,
    at: "2026-12-02T00:00:00.000Z",
    type,
    payload,
    parent_id: null,
  }));
}

/** {@linkcode plainSession} with `extra` events after it, as `[type, payload]` pairs. */
function sessionWith(id: string, extra: readonly [string, unknown][]): SessionEvent[] {
  const events = plainSession(id);
  for (const [type, payload] of extra) {
    events.push({
      ...events[0]!,
      id: `${id}-${events.length + 1}`,
      seq: events.length + 1,
      type,
      payload,
    });
  }
  return events;
}

/** A session with a request open: a tool call and its `approval/requested`. */
function askedSession(id: string): SessionEvent[] {
  const call = { id: "call_x", name: "Bash", args: { command: "ls" } };
  return sessionWith(id, [["tool/call", call], ["approval/requested", { request_id: "r1", call }]]);
}

/** The approvals sweep's first read of a session: its request events, at most one. */
const isRequestCheck = (read: Read): boolean =>
  read.options.limit === 1 && read.options.types?.includes("approval/requested") === true;

Deno.test("boot sweeps: the approvals and queued-input sweeps read only the sessions the store lists by type, by sparse types", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sweeps-" });
  try {
    const path = `${dir}/sessions.db`;
    const seed = SqliteSessionStore.open({ path });
    for (let i = 0; i < 12; i++) await seed.importSession(plainSession(`agent-${i}`));
    // One session has a request open: the approvals sweep folds this one whole.
    await seed.importSession(askedSession("asked"));
    // One had a message sent over the socket, claimed since: the recovery reads this one's input.
    const queued = plainSession("queued").length + 1;
    await seed.importSession(sessionWith("queued", [
      ["input/queued", { kind: "message", content: "go on", wake: true }],
      ["user/message", { content: "go on", queued_seq: queued }],
    ]));
    await seed.close();

    const reads: Read[] = [];
    const lists: (readonly string[])[] = [];
    const stack = await createAgentStack({
      adapter: scriptedAdapter([]),
      approvals: {},
      recoverInput: true,
      store: { plugin: recordingStore(path, reads, undefined, lists) },
    });
    try {
      await stack.ctx.idle();
      assert.ok(stack.agents instanceof AgentRegistry);
      await stack.agents.recovered();
      // The sweeps' reads alone: what is read below, to check the outcome, is not theirs.
      const swept = [...reads];
      assert.deepStrictEqual(lists, [["approval/requested", "approval/resolved"], [
        "input/queued",
      ]]);
      assert.deepStrictEqual(swept.filter(isRequestCheck).map((read) => read.session), ["asked"]);
      assert.deepStrictEqual(
        [
          ...new Set(
            swept.filter((read) => read.options.types?.includes("input/queued")).map((read) =>
              read.session
            ),
          ),
        ],
        ["queued"],
      );
      const wide = swept.filter((read) => {
        const types = read.options.types;
        if (types !== undefined) return !allSparse(types);
        return (read.options.to_seq ?? Infinity) > 1; // seq 1 (session/created) is one row
      });
      assert.deepStrictEqual(
        [...new Set(wide.map((read) => read.session))],
        ["asked"],
        `reads beyond the sparse types: ${JSON.stringify(wide)}`,
      );
      const approvals = stack.ctx.get(ApprovalsKey) as unknown as ApprovalsService;
      assert.deepStrictEqual((await approvals.state("asked"))?.open, ["r1"]);
    } finally {
      await stack.dispose();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("boot sweeps: the lost-job sweep reads each session by sparse types alone", async () => {
  const reads: Read[] = [];
  const lists: unknown[] = [];
  const sessions = {
    list: (options: StoreListOptions = {}) => {
      lists.push(options.types);
      return Promise.resolve(["a", "b", "c"]);
    },
    read: (session: string, options: StoreReadOptions = {}) => {
      reads.push({ session, options });
      return Promise.resolve([]);
    },
  } as unknown as Sessions;
  const reported = await reportLostJobs({
    sessions,
    logger: createMemoryLogger(),
    stopped: () => false,
    live: () => false,
    notify: () => Promise.resolve(),
  });
  assert.equal(reported, 0);
  // It asks the store for the sessions holding jobs; this one names all three, and each is read.
  assert.deepStrictEqual(lists, [["job/started"]]);
  assert.deepStrictEqual(reads.map((read) => read.session), ["a", "b", "c"]);
  for (const read of reads) assert.ok(allSparse(read.options.types ?? []), JSON.stringify(read));
});

/**
 * A fake `Sessions` whose reads settle at once (as SQLite's do), recording each read's session, and the number of
 * reads made before the first macrotask scheduled with it ran.
 */
function instantSessions(ids: readonly string[]): {
  sessions: Sessions;
  reads: string[];
  readsBeforeTurn: Promise<number>;
} {
  const reads: string[] = [];
  const turn = Promise.withResolvers<number>();
  setImmediate(() => turn.resolve(reads.length));
  const sessions = {
    list: () => Promise.resolve([...ids]),
    read: (session: string) => {
      reads.push(session);
      return Promise.resolve([]);
    },
  } as unknown as Sessions;
  return { sessions, reads, readsBeforeTurn: turn.promise };
}

Deno.test("boot sweeps: the lost-job sweep gives the event loop a turn between sessions", async () => {
  const { sessions, reads, readsBeforeTurn } = instantSessions(["a", "b", "c"]);
  await reportLostJobs({
    sessions,
    logger: createMemoryLogger(),
    stopped: () => false,
    live: () => false,
    notify: () => Promise.resolve(),
  });
  assert.deepStrictEqual(reads, ["a", "b", "c"]);
  // Without the turn, all three sessions are read before any macrotask runs.
  assert.equal(await readsBeforeTurn, 1);
});

Deno.test("boot sweeps: the queued-input recovery gives the event loop a turn between sessions", async () => {
  const { sessions, reads, readsBeforeTurn } = instantSessions(["agent-a", "agent-b", "agent-c"]);
  await recoverQueuedInput({
    sessions,
    logger: createMemoryLogger(),
    stopped: () => false,
    resident: () => false,
    settled: () => Promise.resolve(true),
    driverReady: () => true,
    ensure: () => Promise.reject(new Error("nothing is pending: no agent is made resident")),
  });
  assert.deepStrictEqual(reads, ["agent-a", "agent-b", "agent-c"]);
  assert.equal(await readsBeforeTurn, 1);
});

Deno.test("boot sweeps: the approvals sweep gives the event loop a turn between sessions", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-sweeps-" });
  try {
    const path = `${dir}/sessions.db`;
    const seed = SqliteSessionStore.open({ path });
    const ids = ["agent-a", "agent-b", "agent-c"];
    for (const id of ids) await seed.importSession(askedSession(id));
    await seed.close();
    const reads: Read[] = [];
    const approvalReads = (): string[] => reads.filter(isRequestCheck).map((read) => read.session);
    let readsBeforeTurn: number | undefined;
    const recording = recordingStore(path, reads, (read) => {
      // At the sweep's first read, a macrotask that counts how many sessions it read before it ran.
      if (isRequestCheck(read) && approvalReads().length === 1) {
        setImmediate(() => readsBeforeTurn = approvalReads().length);
      }
    });
    const stack = await createAgentStack({
      adapter: scriptedAdapter([]),
      approvals: {},
      store: { plugin: recording },
    });
    try {
      await stack.ctx.idle();
      assert.deepStrictEqual(approvalReads(), ids);
      // SQLite's reads of three small sessions settle without a macrotask: without the turn, all three come first.
      assert.equal(readsBeforeTurn, 1);
    } finally {
      await stack.dispose();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
