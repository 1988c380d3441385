/**
 * The agents service's lifecycle: resident agents, idle eviction on a fake clock, least-recently-used eviction at
 * the cap, the retryable refusal when every resident agent is busy, transparent rehydration from the log (the next
 * request byte-identical to the one without eviction), and durable input (`input/queued`) claimed once.
 */
import assert from "node:assert/strict";
import type { TerretError } from "@terret/hames";
import { AgentDisposed, openRouterLlm } from "@terret/core";
import { type AgentClock, AgentClockKey, type AgentDisposedPayload } from "@terret/core/agents";
import {
  type AgentStack,
  createAgentStack,
  eventShapes,
  fakeOpenRouter,
  scriptedAdapter,
  scriptedTool,
  sseResponse,
  textReply,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";

/** A clock the test moves by hand. */
function fakeClock(): AgentClock & { advance(ms: number): void } {
  let now = 1_000;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
  };
}

function rejectsWith(code: string, message: string): (error: unknown) => boolean {
  return (error) => {
    assert.equal((error as TerretError).code, code);
    assert.equal((error as Error).message, message);
    return true;
  };
}

function disposals(stack: AgentStack): AgentDisposedPayload[] {
  const seen: AgentDisposedPayload[] = [];
  stack.ctx.on(AgentDisposed, (payload) => void seen.push(payload));
  return seen;
}

/** Runs the same two-turn conversation; `between` runs after the first turn. Returns the requests and the log. */
async function conversation(
  dir: string,
  between: (stack: AgentStack) => Promise<void>,
): Promise<{ bodies: string[]; events: unknown[] }> {
  await using server = await fakeOpenRouter();
  server.script(
    sseResponse(toolCallTurn([{ id: "call_1", name: "lookup", args: { city: "Oslo" } }])),
    sseResponse(textTurn(["Oslo is ", "4°."])),
    sseResponse(textTurn("Bergen is 7°.")),
  );
  await using stack = await createAgentStack({
    allow: ["lookup"],
    sqlitePath: `${dir}/terret.db`,
  });
  stack.ctx.provide(AgentClockKey, fakeClock());
  await stack.ctx.plugin(openRouterLlm, {
    model: "test/model",
    base_url: server.url,
    api_key: "sk-or-test-key",
    max_retries: 0,
  }).settled();
  stack.tools.register(
    stack.ctx,
    scriptedTool("lookup", { reply: (args) => `${args.city}: fine` }).definition,
  );
  const first = await stack.agents.create({ agent_id: "w", meta: { persona: "Weather." } });
  first.send("Oslo?");
  await first.idle();
  await between(stack);
  const again = await stack.agents.ensure("w");
  again.send("And Bergen?");
  await again.idle();
  const bodies = server.requests.map((request) => JSON.stringify(request.body));
  const events = eventShapes(await stack.sessions.read("w"));
  return { bodies, events };
}

Deno.test("golden: an agent evicted mid-conversation is rehydrated from its log and sends the byte-identical next request", async () => {
  const plain = await Deno.makeTempDir({ prefix: "terret-lifecycle-" });
  const evicted = await Deno.makeTempDir({ prefix: "terret-lifecycle-" });
  try {
    const without = await conversation(plain, () => Promise.resolve());
    let seen: AgentDisposedPayload[] = [];
    const withEviction = await conversation(evicted, async (stack) => {
      seen = disposals(stack);
      const before = stack.agents.get("w")!;
      (stack.ctx.get(AgentClockKey) as ReturnType<typeof fakeClock>).advance(600_000);
      assert.equal(await stack.agents.sweep(), 1);
      assert.equal(stack.agents.count, 0);
      assert.equal(before.status, "disposed");
    });
    assert.deepStrictEqual(seen, [{ agent_id: "w", session_id: "w", reason: "evicted" }]);
    assert.equal(withEviction.bodies.length, 3);
    assert.deepStrictEqual(withEviction.bodies, without.bodies);
    assert.deepStrictEqual(withEviction.events, without.events);
    // The third request carries the whole first turn: the rehydrated agent saw everything.
    const third = JSON.parse(withEviction.bodies[2]!) as { messages: { role: string }[] };
    assert.deepStrictEqual(third.messages.map((message) => message.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
  } finally {
    await Deno.remove(plain, { recursive: true });
    await Deno.remove(evicted, { recursive: true });
  }
});

Deno.test("sweep() evicts only agents idle for idle_evict_after: never a running one or one with queued input", async () => {
  const adapter = scriptedAdapter([[
    { type: "message_start" },
    { type: "gate", gate: "hold" },
    ...textReply("Done.").slice(1),
  ]]);
  await using stack = await createAgentStack({ adapter });
  const clock = fakeClock();
  stack.ctx.provide(AgentClockKey, clock);
  const seen = disposals(stack);
  const idle = await stack.agents.ensure("idle");
  const busy = await stack.agents.ensure("busy");
  const waiting = await stack.agents.ensure("waiting");
  busy.send("Work");
  await adapter.reached("hold");
  waiting.inject("Context for later."); // queued, not waking
  clock.advance(599_999);
  assert.equal(await stack.agents.sweep(), 0);
  clock.advance(1);
  assert.equal(await stack.agents.sweep(), 1);
  assert.deepStrictEqual(seen, [{ agent_id: "idle", session_id: "idle", reason: "evicted" }]);
  assert.equal(idle.status, "disposed");
  assert.deepStrictEqual(stack.agents.list().map((agent) => agent.id), ["busy", "waiting"]);
  assert.equal(stack.agents.busyCount, 2);
  adapter.open("hold");
  await busy.idle();
  // The turn's end counts as a use: busy is idle from now on, not from its creation.
  assert.equal(await stack.agents.sweep(), 0);
  clock.advance(600_000);
  assert.equal(await stack.agents.sweep(), 1);
  assert.deepStrictEqual(seen.map((payload) => payload.agent_id), ["idle", "busy"]);
  // The evicted agent's session stays, and it comes back from it.
  assert.equal(await stack.sessions.head("busy"), 8);
  const back = await stack.agents.ensure("busy");
  assert.notEqual(back, busy);
  assert.equal(back.status, "idle");
});

Deno.test("at the cap, a new agent evicts the least recently used idle one; only when all are busy is it refused, retryably", async () => {
  const adapter = scriptedAdapter([
    [{ type: "message_start" }, { type: "gate", gate: "one" }, ...textReply("1.").slice(1)],
    [{ type: "message_start" }, { type: "gate", gate: "two" }, ...textReply("2.").slice(1)],
  ]);
  await using stack = await createAgentStack({ adapter, maxAgents: 2 });
  const clock = fakeClock();
  stack.ctx.provide(AgentClockKey, clock);
  const seen = disposals(stack);
  const a = await stack.agents.ensure("a");
  clock.advance(1);
  await stack.agents.ensure("b");
  clock.advance(1);
  await stack.agents.ensure("a"); // a used after b
  clock.advance(1);
  const c = await stack.agents.ensure("c");
  assert.deepStrictEqual(seen.map((payload) => [payload.agent_id, payload.reason]), [
    ["b", "evicted"],
  ]);
  a.send("One");
  c.send("Two");
  await adapter.reached("one");
  await adapter.reached("two");
  await assert.rejects(
    stack.agents.ensure("d"),
    (error: unknown) => {
      rejectsWith(
        "AgentsBusy",
        'Cannot make agent "d" resident: all 2 resident agents are busy and the cap (agents.max_agents) is 2; ' +
          "retry once one is idle",
      )(error);
      assert.deepStrictEqual((error as TerretError).details, {
        agent_id: "d",
        max_agents: 2,
        retryable: true,
      });
      return true;
    },
  );
  assert.equal(stack.agents.count, 2);
  adapter.open("one");
  await a.idle();
  const d = await stack.agents.ensure("d");
  assert.equal(d.id, "d");
  assert.deepStrictEqual(stack.agents.list().map((agent) => agent.id), ["c", "d"]);
  adapter.open("two");
  await c.idle();
});

Deno.test("enqueue() acks once input/queued is durable; the claim carries queued_seq and the model never sees the queued event", async () => {
  const adapter = scriptedAdapter([textReply("Hi.")]);
  await using stack = await createAgentStack({ adapter });
  const agent = await stack.agents.ensure("q");
  const seq = await agent.enqueue({ kind: "message", content: "Hello" });
  assert.equal(seq, 2);
  await agent.idle();
  const shapes = eventShapes(await stack.sessions.read("q"));
  assert.deepStrictEqual(shapes.map((shape) => shape.type), [
    "session/created",
    "input/queued",
    "turn/start",
    "step/start",
    "user/message",
    "assistant/chunk",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  assert.deepStrictEqual(shapes[1]!.payload, { kind: "message", content: "Hello", wake: true });
  assert.deepStrictEqual(shapes[4]!.payload, { content: "Hello", queued_seq: 2 });
  assert.deepStrictEqual(adapter.requests[0]!.messages, [
    { role: "user", parts: [{ type: "text", text: "Hello" }] },
  ]);
  await assert.rejects(
    agent.enqueue({ kind: "steer", content: 42 as unknown as string }),
    (error: unknown) => (error as TerretError).code === "InvalidPayload",
  );
  assert.equal(await stack.sessions.head("q"), 9); // the refused steer wrote nothing
});

Deno.test("acknowledged input no step claimed is queued again, once, when the agent is made resident after a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-lifecycle-" });
  try {
    {
      const adapter = scriptedAdapter([[
        { type: "message_start" },
        { type: "gate", gate: "hold" },
        ...textReply("First.").slice(1),
      ]]);
      await using stack = await createAgentStack({ adapter, sqlitePath: `${dir}/terret.db` });
      const agent = await stack.agents.ensure("r");
      await agent.enqueue({ kind: "message", content: "One" });
      await adapter.reached("hold");
      await agent.enqueue({ kind: "steer", content: "Use metric.", wake: false });
      await agent.enqueue({ kind: "message", content: "Two" });
      // The stack stops with the first turn open and two acknowledged inputs unclaimed.
    }
    const adapter = scriptedAdapter([textReply("Again."), textReply("Second.")]);
    await using stack = await createAgentStack({ adapter, sqlitePath: `${dir}/terret.db` });
    const agent = await stack.agents.ensure("r");
    await adapter.waitForRequests(2);
    await agent.idle();
    const events = await stack.sessions.read("r");
    const claims = events.filter((event) =>
      event.type === "user/message" || event.type === "context/injected"
    ).map((event) => [event.type, event.payload]);
    assert.deepStrictEqual(claims, [
      ["user/message", { content: "One", queued_seq: 2 }],
      ["context/injected", { content: "Use metric.", queued_seq: 6 }],
      ["user/message", { content: "Two", queued_seq: 7 }],
    ]);
    // Made resident again (evicted, then ensured): nothing is claimed twice.
    await stack.agents.disposeAgent("r");
    await stack.agents.ensure("r");
    assert.equal(adapter.requests.length, 2);
    assert.equal(await stack.sessions.head("r"), events.length);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
