/**
 * Golden durable-event tests of subagents (issue 24 §1): each scenario drives a real agent stack (memory store,
 * sessions, tools and allow list, prompt, agents, loop, the subagents row) with scripted adapters for the parent
 * (`main`) and the children (`subagent`), and asserts the exact durable events of the parent's and the children's
 * logs against `tests/golden/subagents/<scenario>.jsonl`. Regenerate after an intended change with
 * `UPDATE_GOLDEN=1 deno test -A tests/subagents_golden_test.ts`.
 */
import assert from "node:assert/strict";
import { AgentDisposed, ApprovalsKey, Llm } from "@terret/core";
import { ToolPolicyKey } from "@terret/core/tools";
import { SubagentsService } from "@terret/core/subagents";
import {
  type AgentStack,
  createAgentStack,
  errorReply,
  eventShapes,
  type ScriptedAdapter,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { assertGolden } from "./fixtures/golden.ts";

interface Fixture extends AsyncDisposable {
  readonly stack: AgentStack;
  readonly child: ScriptedAdapter;
  readonly disposed: string[];
}

async function fixture(
  parent: ScriptedAdapter,
  child: ScriptedAdapter,
  options: { allow?: readonly string[]; config?: Record<string, unknown> } = {},
): Promise<Fixture> {
  const stack = await createAgentStack({
    adapter: parent,
    allow: options.allow ?? ["Task", "lookup"],
    rows: [{ id: "subagents", plugin: SubagentsService, config: options.config ?? {} }],
  });
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: child });
  stack.tools.register(stack.ctx, scriptedTool("lookup", { concurrency: "parallel" }).definition);
  const disposed: string[] = [];
  stack.ctx.on(AgentDisposed, ({ agent_id }) => void disposed.push(agent_id));
  return { stack, child, disposed, [Symbol.asyncDispose]: () => stack.dispose() };
}

/** The session's events, request ids numbered in order of appearance (they are random). */
async function golden(stack: AgentStack, sessionId: string, name: string): Promise<void> {
  const ids = new Map<string, string>();
  const text = JSON.stringify(eventShapes(await stack.sessions.read(sessionId))).replace(
    /"request_id":"([^"]+)"/g,
    (_, id: string) => {
      if (!ids.has(id)) ids.set(id, `r${ids.size + 1}`);
      return `"request_id":"${ids.get(id)}"`;
    },
  );
  await assertGolden(`subagents/${name}`, JSON.parse(text));
}

const task = (id: string, prompt: string, type = "general-purpose") => ({
  id,
  name: "Task",
  args: { description: "Look it up", prompt, subagent_type: type },
});

Deno.test("golden: a Task turn runs a child in a fresh session and answers with its final text", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "Find the answer")]),
    textReply("It is 42."),
  ]);
  const child = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "answer" } }]),
    textReply("The answer is 42."),
  ]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("What is the answer?");
  await agent.idle();
  await golden(fx.stack, "p", "task_turn_parent");
  await golden(fx.stack, "p.sub-1", "task_turn_child");
  // The child saw only its prompt (capabilities, not the transcript), under its own policy's tools.
  assert.deepStrictEqual(child.requests[0]!.messages, [
    { role: "user", parts: [{ type: "text", text: "Find the answer" }] },
  ]);
  assert.deepStrictEqual(child.requests[0]!.tools?.map((tool) => tool.name), ["Task", "lookup"]);
  // Disposed after its turn; the parent's usage includes the child's two steps.
  assert.deepStrictEqual(fx.disposed, ["p.sub-1"]);
  assert.equal(fx.stack.agents.get("p.sub-1"), undefined);
  const usage = await fx.stack.sessions.usage("p");
  assert.deepStrictEqual([usage.steps, usage.input_tokens, usage.output_tokens], [2, 40, 20]);
});

/** Resolves once `check` holds; fails the test after 10 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const promptOf = (request: { messages: readonly { parts: readonly unknown[] }[] }): string =>
  (request.messages[0]!.parts[0] as { text: string }).text;

Deno.test("golden: two parallel Tasks run their children together; results in call order", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "alpha"), task("t2", "beta")]),
    textReply("Both done."),
  ]);
  // Each child's answer depends on its own prompt, whichever request arrives first; both wait at a gate.
  const answer = (request: Parameters<typeof promptOf>[0]) => {
    const which = promptOf(request);
    return [{ type: "gate" as const, gate: which }, ...textReply(`${which} done`)];
  };
  const child = scriptedAdapter([answer, answer]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("Do both");
  // Both children are running at once: each waits at its gate before either ends.
  await child.reached("alpha");
  await child.reached("beta");
  assert.deepStrictEqual(fx.stack.agents.list().map((a) => a.id).sort(), [
    "p",
    "p.sub-1",
    "p.sub-2",
  ]);
  child.open("beta");
  child.open("alpha");
  await agent.idle();
  await golden(fx.stack, "p", "parallel_parent");
  await golden(fx.stack, "p.sub-1", "parallel_child_1");
  await golden(fx.stack, "p.sub-2", "parallel_child_2");
  assert.deepStrictEqual(fx.disposed.sort(), ["p.sub-1", "p.sub-2"]);
});

Deno.test("golden: a child is denied a tool its parent's session narrowing removed", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "Use lookup")]), textReply("Ok.")]);
  const child = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "x" } }]),
    textReply("lookup was denied."),
  ]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  // The floor allows Task and lookup; the parent's session narrows to Task alone.
  await fx.stack.sessions.append("p", { type: "policy/updated", payload: { allow: ["Task"] } });
  agent.send("Go");
  await agent.idle();
  await golden(fx.stack, "p", "narrowed_parent");
  await golden(fx.stack, "p.sub-1", "narrowed_child");
  // The child was never offered lookup either.
  assert.deepStrictEqual(child.requests.map((r) => r.tools?.map((tool) => tool.name)), [
    ["Task"],
    ["Task"],
  ]);
});

Deno.test("a client's later policy/updated on a child narrows it but never widens it past the parent's share", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "Say hi")]), textReply("Ok.")]);
  const child = scriptedAdapter([textReply("hi")]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  // The floor allows Task and lookup; the parent's session narrows to Task alone, so the child's share is Task.
  await fx.stack.sessions.append("p", { type: "policy/updated", payload: { allow: ["Task"] } });
  agent.send("Go");
  await agent.idle();
  const policy = fx.stack.ctx.get(ToolPolicyKey);
  const allowed = async (name: string) =>
    (await policy.check(name, { session_id: "p.sub-1" })).allowed;
  // What a client granted p* sends as set_policy on the child: everything the floor allows.
  await fx.stack.sessions.append("p.sub-1", {
    type: "policy/updated",
    payload: { allow: ["Task", "lookup"] },
  });
  assert.deepStrictEqual([await allowed("Task"), await allowed("lookup")], [true, false]);
  await fx.stack.sessions.append("p.sub-1", { type: "policy/updated", payload: { allow: [] } });
  assert.deepStrictEqual([await allowed("Task"), await allowed("lookup")], [false, false]);
});

Deno.test("golden: a grandchild at the depth limit is refused a Task of its own", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "level one")]), textReply("Done.")]);
  const child = scriptedAdapter([
    toolCallsReply([task("u1", "level two")]), // p.sub-1 (depth 1) delegates
    toolCallsReply([task("v1", "level three")]), // p.sub-1.sub-1 (depth 2) tries to
    textReply("Could not delegate; did it myself."), // p.sub-1.sub-1
    textReply("Level two answered."), // p.sub-1
  ]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("Go deep");
  await agent.idle();
  await golden(fx.stack, "p", "depth_parent");
  await golden(fx.stack, "p.sub-1", "depth_child");
  await golden(fx.stack, "p.sub-1.sub-1", "depth_grandchild");
  assert.equal(await fx.stack.sessions.head("p.sub-1.sub-1.sub-1"), 0);
  assert.deepStrictEqual(fx.disposed, ["p.sub-1.sub-1", "p.sub-1"]);
  // Usage rolls up the whole lineage: 2 parent steps, 2 child steps, 2 grandchild steps.
  assert.equal((await fx.stack.sessions.usage("p")).input_tokens, 60);
});

Deno.test("golden: cancelling the parent mid-child cancels the child, which is disposed", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "Take your time")])]);
  const child = scriptedAdapter([[{ type: "message_start" }, { type: "gate", gate: "never" }]]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("Start");
  await child.reached("never");
  assert.equal(agent.cancel("the user pressed stop"), true);
  await agent.idle();
  await until(() => fx.disposed.includes("p.sub-1"), "the child's disposal");
  await golden(fx.stack, "p", "cancel_parent");
  await golden(fx.stack, "p.sub-1", "cancel_child");
});

Deno.test("golden: a failing child is an is_error Task result, and the parent goes on", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "Fail")]), textReply("It failed.")]);
  const child = scriptedAdapter([
    errorReply({ kind: "http", status: 500, message: "upstream exploded", retryable: false }),
  ]);
  await using fx = await fixture(parent, child);
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("Try");
  await agent.idle();
  await golden(fx.stack, "p", "failing_parent");
  await golden(fx.stack, "p.sub-1", "failing_child");
  assert.deepStrictEqual(fx.disposed, ["p.sub-1"]);
});

Deno.test("golden: an unknown subagent_type and an empty prompt are is_error results for the model", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "Review it", "reviewer"), task("t2", "  ")]),
    textReply("Noted."),
  ]);
  const child = scriptedAdapter([]);
  await using fx = await fixture(parent, child, {
    config: {
      types: [
        { name: "general-purpose", description: "Anything" },
        { name: "explorer", description: "Reads code", tools: ["lookup"] },
      ],
    },
  });
  const agent = await fx.stack.agents.create({ agent_id: "p" });
  agent.send("Go");
  await agent.idle();
  await golden(fx.stack, "p", "bad_input_parent");
  assert.equal(child.requests.length, 0);
  assert.deepStrictEqual(await fx.stack.sessions.list(), ["p"]);
  // The types are listed in Task's description so the model can choose.
  assert.match(
    parent.requests[0]!.tools!.find((tool) => tool.name === "Task")!.description,
    /Available agent types \(subagent_type\):\n- general-purpose: Anything\n- explorer: Reads code$/,
  );
});

Deno.test("golden: a child is unattended by default; a type with approvals inherit parks for the parent's clients", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "Try the guarded tool", "worker")]),
    toolCallsReply([task("t2", "Try it again", "helper")]),
    textReply("Done."),
  ]);
  const child = scriptedAdapter([
    toolCallsReply([{ id: "g1", name: "guarded", args: { n: 1 } }]),
    textReply("It was denied."),
    toolCallsReply([{ id: "g2", name: "guarded", args: { n: 2 } }]),
    textReply("It ran."),
  ]);
  const stack = await createAgentStack({
    adapter: parent,
    allow: ["Task", "guarded"],
    // No rule: every policy call is asked about.
    approvals: {},
    rows: [{
      id: "subagents",
      plugin: SubagentsService,
      config: {
        types: [
          { name: "worker", description: "Unattended" },
          { name: "helper", description: "Attended", approvals: "inherit" },
        ],
      },
    }],
  });
  await using _stack = stack;
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: child });
  stack.tools.register(stack.ctx, scriptedTool("guarded", { approval: "policy" }).definition);
  const agent = await stack.agents.create({ agent_id: "p" });
  agent.send("Go");
  const approvals = stack.ctx.get(ApprovalsKey);
  // The attended child's call parks in its own log until a client answers it there.
  await until(() => stack.agents.get("p.sub-2")?.status === "waiting_approval", "the parked call");
  const [request] = await approvals.pending("p.sub-2");
  await approvals.answer("p.sub-2", request!.request_id, {
    decision: "allow",
    by: { kind: "client", id: "watcher" },
  });
  await agent.idle();
  await golden(stack, "p.sub-1", "unattended_child");
  await golden(stack, "p.sub-2", "inherit_child");
});
