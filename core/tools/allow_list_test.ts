import assert from "node:assert/strict";
import { type Context, createContext, definePlugin } from "@terret/hames";
import type { EventDraft, SessionEvent } from "../sessions/envelope.ts";
import { MemorySessionStore, memoryStorePlugin } from "../sessions/memory_store.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import { sessionsPlugin } from "../sessions/sessions_plugin.ts";
import { sqliteStorePlugin } from "../sessions/sqlite_store_plugin.ts";
import {
  type CommitListener,
  type SessionStore,
  SessionStoreKey,
  type StoreReadOptions,
} from "../sessions/store.ts";
import {
  floorDenial,
  noPolicyDenial,
  sessionDenial,
  ToolAllowList,
  ToolPolicyKey,
} from "./allow_list.ts";
import { createToolStack, scriptedTool } from "./testing.ts";
import { ToolRegistry, ToolsKey } from "./tool_registry.ts";
import { CORE_ERRORS } from "../errors.ts";

/** A memory store that counts reads and can hold them, to prove what the cache reads and when. */
class CountingStore implements SessionStore {
  readonly kind = "counting";
  readonly inner = new MemorySessionStore();
  reads: string[] = [];
  hold: Promise<void> | undefined;
  fail: Error | undefined;
  append(draft: EventDraft): Promise<SessionEvent> {
    return this.inner.append(draft);
  }
  importSession(events: readonly SessionEvent[]): Promise<void> {
    return this.inner.importSession(events);
  }
  async read(sessionId: string, options?: StoreReadOptions): Promise<SessionEvent[]> {
    this.reads.push(
      `${sessionId}:${options?.types?.join(",") ?? `seqs up to ${options?.to_seq ?? "the head"}`}`,
    );
    const result = this.inner.read(sessionId, options);
    if (this.hold !== undefined) await this.hold;
    if (this.fail !== undefined) throw this.fail;
    return await result;
  }
  head(sessionId: string): Promise<number> {
    return this.inner.head(sessionId);
  }
  list(): Promise<string[]> {
    return this.inner.list();
  }
  onCommit(listener: CommitListener): () => void {
    return this.inner.onCommit(listener);
  }
  stats() {
    return this.inner.stats();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function mount(
  allow: string[] | undefined,
  store = new CountingStore(),
  extra: Record<string, unknown> = {},
) {
  const ctx = createContext({ mode: "test" });
  ctx.plugin(
    definePlugin({
      name: "counting-store",
      provides: [SessionStoreKey],
      apply: (c: Context) => void c.provide(SessionStoreKey, store),
    }),
  );
  ctx.plugin(sessionsPlugin, {});
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  // Created before the allow list listens, so its first use of each reads the log (a session created while it
  // listens is cached from its first event instead).
  for (const id of ["s1", "s2"]) await sessions.create({ session_id: id });
  ctx.plugin(ToolRegistry, {});
  if (allow !== undefined) ctx.plugin(ToolAllowList, { allow, ...extra }, { id: "tools.allow" });
  await ctx.idle();
  const allowList = ctx.maybe(ToolPolicyKey) as ToolAllowList | undefined;
  return { ctx, store, sessions, tools: ctx.get(ToolsKey), allowList };
}

/** The store reads of one read of a session's policy: its `session/created` (seq 1), then its `policy/updated`. */
const read = (id: string): string[] => [`${id}:seqs up to 1`, `${id}:policy/updated`];

async function verdicts(
  policy: { check: ToolAllowList["check"] },
  sessionId: string,
  names: string[],
) {
  const out: string[] = [];
  for (const name of names) {
    const verdict = await policy.check(name, { session_id: sessionId });
    out.push(verdict.allowed ? `${name}: allowed` : `${name}: ${verdict.reason}`);
  }
  return out;
}

Deno.test("without a tools.allow row every tool is denied, naming the tool", async () => {
  await using stack = await createToolStack();
  await stack.sessions.create({ session_id: "s1" });
  stack.tools.register(stack.ctx, scriptedTool("Read").definition);
  const result = await stack.tools.execute({ id: "c1", name: "Read", args: {} }, {
    ctx: stack.ctx,
    session_id: "s1",
    agent_id: "a",
  });
  assert.deepStrictEqual(result, {
    id: "c1",
    name: "Read",
    content: noPolicyDenial("Read"),
    is_error: true,
  });
  assert.equal(
    result.content,
    'Cannot run tool "Read": no allow list is configured (config row tools.allow), so every tool is denied',
  );
  assert.deepStrictEqual(await stack.tools.offered({ ctx: stack.ctx, session_id: "s1" }), []);
});

Deno.test("the floor denies by default, case-sensitively, with fnmatch globs", async () => {
  const { ctx, allowList } = await mount(["Read", "mcp__nexus__*", "terminal_[ior]*"]);
  await using _ = ctx;
  assert.deepStrictEqual(allowList!.floor, ["Read", "mcp__nexus__*", "terminal_[ior]*"]);
  assert.deepStrictEqual(
    await verdicts(allowList!, "s1", [
      "Read",
      "read",
      "READ",
      "Bash",
      "mcp__nexus__search",
      "mcp__Nexus__search",
      "mcp__nexusx__search",
      "terminal_open",
      "terminal_close",
    ]),
    [
      "Read: allowed",
      "read: floor",
      "READ: floor",
      "Bash: floor",
      "mcp__nexus__search: allowed",
      "mcp__Nexus__search: floor",
      "mcp__nexusx__search: floor",
      "terminal_open: allowed",
      "terminal_close: floor",
    ],
  );
  assert.deepStrictEqual(await allowList!.check("Bash", { session_id: "s1" }), {
    allowed: false,
    reason: "floor",
    message: floorDenial("Bash"),
  });
});

Deno.test("a session's last policy/updated narrows the floor for that session only, and can never widen it", async () => {
  const { ctx, sessions, allowList, tools } = await mount(["Read", "Grep", "Glob"]);
  await using _ = ctx;
  for (const name of ["Read", "Grep", "Glob", "Bash"]) {
    tools.register(ctx, scriptedTool(name).definition);
  }
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["G*", "Bash"] } });
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Gr?p", "Bash"] } });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Grep", "Glob", "Bash"]), [
    "Read: session",
    "Grep: allowed",
    "Glob: session",
    "Bash: floor",
  ]);
  assert.deepStrictEqual(await verdicts(allowList!, "s2", ["Read", "Grep", "Glob", "Bash"]), [
    "Read: allowed",
    "Grep: allowed",
    "Glob: allowed",
    "Bash: floor",
  ]);
  assert.deepStrictEqual(await allowList!.sessionPolicy("s1"), ["Gr?p", "Bash"]);
  assert.equal(await allowList!.sessionPolicy("s2"), null);
  const denied = await tools.execute({ id: "c1", name: "Read", args: {} }, {
    ctx,
    session_id: "s1",
    agent_id: "a",
  });
  assert.deepStrictEqual([denied.content, denied.is_error], [sessionDenial("Read"), true]);
  assert.deepStrictEqual(
    (await tools.offered({ ctx, session_id: "s1" })).map((schema) => schema.name),
    ["Grep"],
  );
  assert.deepStrictEqual(
    (await tools.offered({ ctx, session_id: "s2" })).map((schema) => schema.name),
    ["Glob", "Grep", "Read"],
  );
  await sessions.append("s2", { type: "policy/updated", payload: { allow: [] } });
  assert.deepStrictEqual(await tools.offered({ ctx, session_id: "s2" }), []);
});

Deno.test("a ceiling policy/updated bounds every later one: a later policy can narrow below it, never widen past it", async () => {
  const { ctx, sessions, allowList, tools } = await mount(["Read", "Grep", "Glob", "Bash"]);
  await using _ = ctx;
  for (const name of ["Read", "Grep", "Glob", "Bash"]) {
    tools.register(ctx, scriptedTool(name).definition);
  }
  await sessions.append("s1", {
    type: "policy/updated",
    payload: { allow: ["Read", "Grep"], ceiling: true },
  });
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["*"] } });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Grep", "Glob", "Bash"]), [
    "Read: allowed",
    "Grep: allowed",
    "Glob: session",
    "Bash: session",
  ]);
  assert.deepStrictEqual(
    (await tools.offered({ ctx, session_id: "s1" })).map((schema) => schema.name),
    ["Grep", "Read"],
  );
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Grep", "Bash"] } });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Grep", "Bash"]), [
    "Read: session",
    "Grep: allowed",
    "Bash: session",
  ]);
  assert.deepStrictEqual(await allowList!.sessionPolicy("s1"), ["Grep", "Bash"]);
  // A new ceiling replaces the old one (it is the session's own narrowing, written by whoever made it).
  await sessions.append("s1", {
    type: "policy/updated",
    payload: { allow: ["Bash"], ceiling: true },
  });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Grep", "Bash"]), [
    "Grep: session",
    "Bash: allowed",
  ]);
  // A restart rebuilds the ceiling from the log.
  await allowList!.reconfigure({ allow: ["Read", "Grep", "Glob", "Bash"], cache_sessions: 1 });
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Read", "Bash"] } });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Bash"]), [
    "Read: session",
    "Bash: allowed",
  ]);
});

Deno.test("the session policy is read once, then updated log-first by a new policy/updated without another read", async () => {
  const { ctx, sessions, allowList, store } = await mount(["*"]);
  await using _ = ctx;
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Read"] } });
  assert.equal(allowList!.isCached("s1"), false);
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Bash", "Read"]), [
    "Read: allowed",
    "Bash: session",
    "Read: allowed",
  ]);
  assert.deepStrictEqual(store.reads, read("s1"));
  assert.equal(allowList!.isCached("s1"), true);

  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Bash"] } });
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read", "Bash"]), [
    "Read: session",
    "Bash: allowed",
  ]);
  assert.deepStrictEqual(store.reads, read("s1"));
});

Deno.test("concurrent first uses share one read; a read overtaken by a policy/updated is not cached", async () => {
  const { ctx, sessions, allowList, store } = await mount(["*"]);
  await using _ = ctx;
  const all = await Promise.all(
    Array.from({ length: 10 }, () => allowList!.check("Bash", { session_id: "s1" })),
  );
  assert.deepStrictEqual(all.map((v) => v.allowed), Array(10).fill(true));
  assert.deepStrictEqual(store.reads, read("s1"));

  let release!: () => void;
  store.hold = new Promise((resolve) => release = resolve);
  const early = allowList!.check("Bash", { session_id: "s2" });
  await sessions.append("s2", { type: "policy/updated", payload: { allow: ["Read"] } });
  const late = allowList!.check("Bash", { session_id: "s2" });
  store.hold = undefined;
  release();
  // The early check was made before the narrowing landed and may answer from before it; the late one, made
  // after, must not share the early read. (Here the early read's policy read came after the narrowing too: the hold
  // was on its seq-1 read.)
  assert.deepStrictEqual([(await early).allowed, (await late).allowed], [false, false]);
  // Two reads of s2, each its seq 1 (both held) and then its policy.
  assert.deepStrictEqual(store.reads, [
    ...read("s1"),
    "s2:seqs up to 1",
    "s2:seqs up to 1",
    "s2:policy/updated",
    "s2:policy/updated",
  ]);
  assert.deepStrictEqual(await verdicts(allowList!, "s2", ["Bash", "Read"]), [
    "Bash: session",
    "Read: allowed",
  ]);
  assert.equal(store.reads.length, 6);
});

Deno.test("an unknown session is denied and never cached; once created it is known from its first event", async () => {
  const { ctx, sessions, allowList, store } = await mount(["Read"]);
  await using _ = ctx;
  assert.deepStrictEqual(await allowList!.check("Read", { session_id: "ghost" }), {
    allowed: false,
    reason: "unknown_session",
    message: 'Cannot run tool "Read": session "ghost" does not exist, so no policy admits the call',
  });
  assert.deepStrictEqual(
    [
      allowList!.isCached("ghost"),
      allowList!.cachedSessions,
      await allowList!.sessionPolicy("ghost"),
    ],
    [false, 0, undefined],
  );
  await sessions.create({ session_id: "ghost" });
  assert.deepStrictEqual(await verdicts(allowList!, "ghost", ["Read", "Bash"]), [
    "Read: allowed",
    "Bash: floor",
  ]);
  // Each read of the unknown session stopped at its seq 1, which it did not have.
  assert.deepStrictEqual(store.reads, ["ghost:seqs up to 1", "ghost:seqs up to 1"]);
  assert.equal(allowList!.isCached("ghost"), true);
});

Deno.test("a fork of a session inherits the narrowing its copied prefix holds", async () => {
  const { ctx, sessions, allowList } = await mount(["*"]);
  await using _ = ctx;
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Read"] } });
  await sessions.fork("s1", { boundary_seq: 2, session_id: "s1-fork" });
  assert.deepStrictEqual(await verdicts(allowList!, "s1-fork", ["Read", "Bash"]), [
    "Read: allowed",
    "Bash: session",
  ]);
});

Deno.test("a restart rebuilds each session's policy from the log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/sessions.db`;
    const boot = async () => {
      const ctx = createContext({ mode: "test" });
      ctx.plugin(sqliteStorePlugin, { path });
      ctx.plugin(sessionsPlugin, {});
      ctx.plugin(ToolAllowList, { allow: ["Read", "Bash"] });
      await ctx.idle();
      return ctx;
    };
    {
      await using ctx = await boot();
      const sessions = ctx.get(SessionsKey);
      await sessions.create({ session_id: "s1" });
      await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Bash"] } });
      await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Read"] } });
      assert.deepStrictEqual(await verdicts(ctx.get(ToolPolicyKey), "s1", ["Read", "Bash"]), [
        "Read: allowed",
        "Bash: session",
      ]);
    }
    await using ctx = await boot();
    assert.deepStrictEqual(await verdicts(ctx.get(ToolPolicyKey), "s1", ["Read", "Bash"]), [
      "Read: allowed",
      "Bash: session",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reconfiguring the floor applies in place and keeps the session cache", async () => {
  const ctx = createContext({ mode: "test" });
  await using _ = ctx;
  const store = new CountingStore();
  ctx.plugin(
    definePlugin({
      name: "counting-store",
      provides: [SessionStoreKey],
      apply: (c: Context) => void c.provide(SessionStoreKey, store),
    }),
  );
  ctx.plugin(sessionsPlugin, {});
  const fiber = ctx.plugin(ToolAllowList, { allow: ["Read"] }, { id: "tools.allow" });
  await ctx.idle();
  await ctx.get(SessionsKey).create({ session_id: "s1" });
  const policy = ctx.get(ToolPolicyKey) as ToolAllowList;
  assert.deepStrictEqual(await verdicts(policy, "s1", ["Read", "Bash"]), [
    "Read: allowed",
    "Bash: floor",
  ]);
  await fiber.reconfigure({ allow: ["Bash"] });
  assert.equal(ctx.get(ToolPolicyKey), policy);
  assert.deepStrictEqual(await verdicts(policy, "s1", ["Read", "Bash"]), [
    "Read: floor",
    "Bash: allowed",
  ]);
  // s1 was created while the allow list listened: cached from its first event, never read.
  assert.deepStrictEqual([store.reads.length, policy.isCached("s1")], [0, true]);
  await assert.rejects(
    async () => await fiber.reconfigure({ allow: ["Read"], extra: true }),
    (error: unknown) => CORE_ERRORS.is(error, "ConfigInvalid"),
  );
  assert.deepStrictEqual(policy.floor, ["Bash"]);
});

Deno.test("the cache keeps at most cache_sessions sessions, least recently used evicted first", async () => {
  const { ctx, sessions, allowList, store } = await mount(["*"], new CountingStore(), {
    cache_sessions: 2,
  });
  await using _ = ctx;
  await sessions.create({ session_id: "s3" });
  for (const id of ["s1", "s2", "s1", "s3"]) await allowList!.check("Read", { session_id: id });
  assert.deepStrictEqual(["s1", "s2", "s3"].map((id) => allowList!.isCached(id)), [
    true,
    false,
    true,
  ]);
  assert.deepStrictEqual(store.reads, [...read("s1"), ...read("s2"), ...read("s3")]);
});

Deno.test("a log read failure denies the call with the reason and caches nothing", async () => {
  const { ctx, allowList, store } = await mount(["*"]);
  await using _ = ctx;
  store.fail = new Error("disk on fire");
  assert.deepStrictEqual(await allowList!.check("Read", { session_id: "s1" }), {
    allowed: false,
    reason: "error",
    message:
      'Cannot run tool "Read": the session\'s policy could not be read (disk on fire), so the call is denied',
  });
  store.fail = undefined;
  assert.deepStrictEqual(await verdicts(allowList!, "s1", ["Read"]), ["Read: allowed"]);
  const aborted = new AbortController();
  aborted.abort(new Error("stop"));
  store.fail = undefined;
  await assert.rejects(
    allowList!.check("Read", { session_id: "s2", signal: aborted.signal }),
    (error: unknown) => error instanceof Error && error.message === "stop",
  );
});

Deno.test("the allow list parks until the sessions service exists, so nothing is allowed before it", async () => {
  await using ctx = createContext({ mode: "test" });
  const fiber = ctx.plugin(ToolAllowList, { allow: ["*"] });
  ctx.plugin(ToolRegistry, {});
  await ctx.idle();
  assert.deepStrictEqual([fiber.state, fiber.missing(), ctx.has(ToolPolicyKey)], [
    "pending",
    ["sessions"],
    false,
  ]);
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  await ctx.idle();
  assert.deepStrictEqual([fiber.state, ctx.has(ToolPolicyKey)], ["active", true]);
});

Deno.test("offered() follows every change behind its cache: a new floor, a session's policy/updated, a tool registered or disposed, a fork's own tool", async () => {
  const ctx = createContext({ mode: "test" });
  await using _ = ctx;
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  ctx.plugin(ToolRegistry, {});
  const fiber = ctx.plugin(ToolAllowList, { allow: ["Read", "Grep"] }, { id: "tools.allow" });
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  const tools = ctx.get(ToolsKey);
  await sessions.create({ session_id: "s1" });
  for (const name of ["Read", "Grep", "Bash"]) tools.register(ctx, scriptedTool(name).definition);
  const offered = async (from: Context = ctx) =>
    (await tools.offered({ ctx: from, session_id: "s1" })).map((schema) => schema.name);
  assert.deepStrictEqual(await offered(), ["Grep", "Read"]);
  // The list handed out is the caller's: changing it changes nothing the next call returns.
  (await tools.offered({ ctx, session_id: "s1" })).pop();
  assert.deepStrictEqual(await offered(), ["Grep", "Read"]);
  await fiber.reconfigure({ allow: ["Read", "Bash"] });
  assert.deepStrictEqual(await offered(), ["Bash", "Read"]);
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Bash"] } });
  assert.deepStrictEqual(await offered(), ["Bash"]);
  await fiber.reconfigure({ allow: ["*"] });
  assert.deepStrictEqual(await offered(), ["Bash"]);
  await sessions.append("s1", { type: "policy/updated", payload: { allow: ["*"] } });
  assert.deepStrictEqual(await offered(), ["Bash", "Grep", "Read"]);
  // A new floor under the same session policy.
  await fiber.reconfigure({ allow: ["Read"] });
  assert.deepStrictEqual(await offered(), ["Read"]);
  await fiber.reconfigure({ allow: ["*"] });
  assert.deepStrictEqual(await offered(), ["Bash", "Grep", "Read"]);
  const off = tools.register(ctx, scriptedTool("Glob").definition);
  assert.deepStrictEqual(await offered(), ["Bash", "Glob", "Grep", "Read"]);
  await off();
  assert.deepStrictEqual(await offered(), ["Bash", "Grep", "Read"]);
  const fork = ctx.fork("agent");
  const sibling = ctx.fork("sibling");
  tools.register(fork, scriptedTool("Edit").definition);
  assert.deepStrictEqual(await offered(fork), ["Bash", "Edit", "Grep", "Read"]);
  assert.deepStrictEqual(await offered(sibling), ["Bash", "Grep", "Read"]);
  assert.deepStrictEqual(await offered(), ["Bash", "Grep", "Read"]);
  assert.deepStrictEqual(await tools.offered({ ctx, session_id: "unknown" }), []);
  await fork[Symbol.asyncDispose]();
  await sibling[Symbol.asyncDispose]();
});
