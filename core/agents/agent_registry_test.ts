import assert from "node:assert/strict";
import { createContext, createMemoryLogger, Loader, type TerretError } from "@terret/hames";
import { AgentClockKey } from "@terret/core/agents";
import {
  AgentDisposed,
  AgentRegistry,
  AgentsKey,
  AgentStatusChanged,
  AgentTurnStopping,
  memoryStorePlugin,
  SessionsKey,
  sessionsPlugin,
} from "@terret/core";
import {
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";

function rejectsWith(code: string, message: string): (error: unknown) => boolean {
  return (error) => {
    assert.equal((error as TerretError).code, code);
    assert.equal((error as Error).message, message);
    return true;
  };
}

Deno.test("ensure() creates the agent on the session of the same id once, and resolves it afterwards", async () => {
  await using stack = await createAgentStack();
  const [a, b] = await Promise.all([stack.agents.ensure("a-1"), stack.agents.ensure("a-1")]);
  assert.equal(a, b);
  assert.equal(await stack.agents.ensure("a-1"), a);
  assert.equal(a.id, "a-1");
  assert.equal(a.session_id, "a-1");
  assert.equal(a.status, "idle");
  assert.equal(stack.agents.get("a-1"), a);
  assert.equal(stack.agents.agentForSession("a-1"), a);
  assert.deepStrictEqual(stack.agents.list(), [a]);
  assert.equal(stack.agents.count, 1);
  assert.deepStrictEqual(eventShapes(await stack.sessions.read("a-1")), [
    { seq: 1, type: "session/created", payload: { meta: { agent_id: "a-1" } } },
  ]);
});

Deno.test("create() refuses a live id, a driven session and a bad id; attaches an existing session", async () => {
  await using stack = await createAgentStack();
  await stack.agents.create({ agent_id: "one" });
  await assert.rejects(
    stack.agents.create({ agent_id: "one" }),
    rejectsWith("AgentExists", 'Cannot create agent "one": it already exists'),
  );
  await assert.rejects(
    stack.agents.create({ agent_id: "two", session_id: "one" }),
    rejectsWith(
      "SessionInUse",
      'Cannot create agent "two" on session "one": another agent drives it',
    ),
  );
  await assert.rejects(
    stack.agents.ensure("../etc"),
    rejectsWith(
      "InvalidAgentId",
      'Cannot use agent id "../etc": it must match /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/',
    ),
  );
  await stack.sessions.create({ session_id: "existing", meta: { persona: "Kept." } });
  const attached = await stack.agents.create({ agent_id: "three", session_id: "existing" });
  assert.equal(attached.session_id, "existing");
  assert.equal(stack.agents.agentForSession("existing"), attached);
  assert.equal(await stack.sessions.head("existing"), 1);
});

Deno.test("the cap counts resident agents: one more evicts the least recently used idle one, and is raised by reconfiguring the row", async () => {
  await using ctx = createContext({ mode: "test" });
  const loader = new Loader(ctx);
  await loader.load([
    { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
    { id: "sessions", plugin: sessionsPlugin, config: {} },
    { id: "agents", plugin: AgentRegistry, config: { max_agents: 2 } },
  ]);
  const agents = ctx.get(AgentsKey);
  let now = 0;
  ctx.provide(AgentClockKey, { now: () => now });
  const disposed: unknown[] = [];
  ctx.on(AgentDisposed, (payload) => void disposed.push(payload));
  const a = await agents.ensure("a");
  now = 1;
  await agents.ensure("b");
  now = 2;
  assert.equal(await agents.ensure("a"), a); // a is now the most recently used
  assert.equal((await agents.ensure("c")).id, "c");
  assert.deepStrictEqual(agents.list().map((agent) => agent.id), ["a", "c"]);
  assert.deepStrictEqual(disposed, [{ agent_id: "b", session_id: "b", reason: "evicted" }]);
  assert.equal(agents.evictions, 1);
  await loader.reconfigure("agents", { max_agents: 3 });
  assert.equal(ctx.get(AgentsKey), agents);
  assert.equal(agents.maxAgents, 3);
  assert.equal((await agents.ensure("b")).id, "b");
  assert.equal(agents.count, 3);
  assert.equal(disposed.length, 1);
});

Deno.test("disposeAgent() refuses a running agent, then disposes an idle one with its fork and emits agent/disposed", async () => {
  const adapter = scriptedAdapter([[
    { type: "message_start" },
    { type: "gate", gate: "hold" },
    ...textReply("Done.").slice(1),
  ]]);
  await using stack = await createAgentStack({ adapter, allow: ["mine"] });
  const disposed: unknown[] = [];
  stack.ctx.on(AgentDisposed, (payload) => void disposed.push(payload));
  const agent = await stack.agents.ensure("worker");
  stack.tools.register(agent.ctx, scriptedTool("mine").definition);
  assert.equal(stack.tools.get("mine", { ctx: agent.ctx })?.name, "mine");
  agent.send("Go");
  await adapter.reached("hold");
  await assert.rejects(
    stack.agents.disposeAgent("worker"),
    rejectsWith(
      "AgentBusy",
      'Cannot dispose agent "worker": a turn is running (cancel it and wait for idle first)',
    ),
  );
  adapter.open("hold");
  await agent.idle();
  await stack.agents.disposeAgent("worker");
  assert.deepStrictEqual(disposed, [{
    agent_id: "worker",
    session_id: "worker",
    reason: "disposed",
  }]);
  assert.equal(agent.status, "disposed");
  assert.equal(agent.ctx.disposed, true);
  assert.equal(stack.tools.get("mine", { ctx: stack.ctx }), undefined);
  assert.equal(stack.agents.get("worker"), undefined);
  assert.throws(
    () => agent.send("more"),
    rejectsWith("AgentDisposed", 'Cannot send a message for agent "worker": it is disposed'),
  );
  await assert.rejects(
    stack.agents.disposeAgent("worker"),
    rejectsWith("AgentNotFound", 'Cannot dispose agent "worker": no such agent'),
  );
  // The durable session outlives the agent: ensure() binds a new agent to it.
  const again = await stack.agents.ensure("worker");
  assert.notEqual(again, agent);
  assert.equal(await stack.sessions.head("worker"), 8);
});

Deno.test("send() and inject() refuse content the log would refuse, before anything is queued", async () => {
  await using stack = await createAgentStack();
  const agent = await stack.agents.ensure("strict");
  assert.throws(
    () => agent.send(42 as unknown as string),
    rejectsWith(
      "InvalidPayload",
      'Cannot queue "user/message" for agent "strict": the payload breaks its schema: payload.content: Invalid input',
    ),
  );
  assert.throws(
    () => agent.inject([{ type: "audio" }] as never),
    (error) => (error as TerretError).code === "InvalidPayload",
  );
  assert.equal(agent.queued, 0);
  assert.equal(agent.status, "idle");
});

Deno.test("a waking steer that arrives while the turn is stopping is not dropped: a new turn logs it", async () => {
  const adapter = scriptedAdapter([textReply("First."), textReply("Second.")]);
  await using stack = await createAgentStack({ adapter });
  const agent = await stack.agents.ensure("racer");
  let once = true;
  agent.ctx.on(AgentTurnStopping, () => {
    if (once) agent.inject("Arrived late.", { wake: true });
    once = false;
  });
  agent.send("Hi");
  await agent.idle();
  const types = eventShapes(await stack.sessions.read("racer")).map((event) =>
    event.type === "context/injected"
      ? `${event.type} ${JSON.stringify(event.payload)}`
      : event.type
  );
  assert.deepStrictEqual(types.slice(7), [
    "turn/end",
    "turn/start",
    "step/start",
    'context/injected {"content":"Arrived late."}',
    "assistant/chunk",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
});

Deno.test("status: running, waiting_approval and back, idle; failed after a failed turn, until the next one succeeds", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "ask", args: {} }]),
    textReply("Approved."),
    [{ type: "error", error: { kind: "network", message: "Connection reset", retryable: true } }],
    textReply("Recovered."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["ask"] });
  const seen: string[] = [];
  stack.ctx.on(
    AgentStatusChanged,
    (payload) => void seen.push(`${payload.previous}>${payload.status}`),
  );
  stack.tools.register(stack.ctx, {
    ...scriptedTool("ask").definition,
    handler: (_args, run) => {
      const me = stack.agents.get(run.agent_id)!;
      me.setWaitingApproval(true);
      me.setWaitingApproval(false);
      return "approved";
    },
  });
  const agent = await stack.agents.ensure("approver");
  agent.send("Needs approval");
  await agent.idle();
  agent.send("Fail please");
  await agent.idle();
  assert.equal(agent.status, "failed");
  agent.send("Try again");
  await agent.idle();
  assert.deepStrictEqual(seen, [
    "idle>running",
    "running>waiting_approval",
    "waiting_approval>running",
    "running>idle",
    "idle>running",
    "running>failed",
    "failed>running",
    "running>idle",
  ]);
  assert.throws(
    () => agent.setWaitingApproval(true),
    rejectsWith(
      "AgentIdle",
      'Cannot report agent "approver" waiting on approval: no turn is running',
    ),
  );
});

Deno.test("without a driver mounted, input waits queued and the agent stays idle", async () => {
  const logger = createMemoryLogger();
  await using ctx = createContext({ mode: "test", logger });
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  ctx.plugin(AgentRegistry, {});
  await ctx.idle();
  const agent = await ctx.get(AgentsKey).ensure("orphan");
  agent.send("Anyone?");
  await agent.idle();
  assert.equal(agent.queued, 1);
  assert.equal(agent.status, "idle");
  assert.equal(await ctx.get(SessionsKey).head("orphan"), 1);
  // The host settled without a driver: the start-up recovery says so at once, then the agent's own wake does.
  assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [
    ["warn", "Queued input was not recovered at start: no driver was mounted"],
    [
      "warn",
      'Agent "orphan" has input but no driver is mounted (service "loop"); it waits for the next wake',
    ],
  ]);
});
