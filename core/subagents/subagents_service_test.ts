import assert from "node:assert/strict";
import { Llm } from "../llm/llm_registry.ts";
import { createAgentStack } from "../loop/testing.ts";
import { scriptedAdapter, textReply, toolCallsReply } from "../llm/testing/scripted_adapter.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SubagentsService } from "./subagents_service.ts";
import { subagentsConfig } from "./subagents_config.ts";

const task = (id: string, prompt: string) => ({
  id,
  name: "Task",
  args: { description: "Work", prompt, subagent_type: "general-purpose" },
});

function results(events: readonly SessionEvent[]): unknown[] {
  return events.filter((event) => event.type === "tool/result").map((event) => {
    const { id, is_error, details } = event.payload as {
      id: string;
      is_error: boolean;
      details: { status: string; session_id?: string };
    };
    return [id, is_error, details.status, details.session_id ?? null];
  });
}

Deno.test("SubagentsService refuses a Task past max_concurrent while another child of the parent runs", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "slow"), task("t2", "fast")]),
    textReply("Ok."),
  ]);
  const child = scriptedAdapter([[{ type: "gate", gate: "slow" }, ...textReply("Slow done.")]]);
  await using stack = await createAgentStack({
    adapter: parent,
    allow: ["Task"],
    rows: [{ id: "subagents", plugin: SubagentsService, config: { max_concurrent: 1 } }],
  });
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: child });
  const agent = await stack.agents.create({ agent_id: "p" });
  agent.send("Both");
  await child.reached("slow");
  child.open("slow");
  await agent.idle();
  const events = await stack.sessions.read("p");
  assert.deepStrictEqual(results(events), [
    ["t1", false, "completed", "p.sub-1"],
    ["t2", true, "refused", null],
  ]);
  assert.equal(
    (events.find((event) =>
      event.type === "tool/result" && (event.payload as { id: string }).id === "t2"
    )!.payload as { content: string }).content,
    "Cannot start a subagent: this agent already runs 1 at once, the most allowed " +
      "(subagents.max_concurrent). Wait for one to finish, then call Task again.",
  );
  assert.equal(child.requests.length, 1);
});

Deno.test("SubagentsService cancels a child that outlives its time budget; the Task result says so", async () => {
  const parent = scriptedAdapter([toolCallsReply([task("t1", "forever")]), textReply("Ok.")]);
  // The child's model never answers: only the budget can end it.
  const child = scriptedAdapter([[{ type: "message_start" }, { type: "gate", gate: "never" }]]);
  await using stack = await createAgentStack({
    adapter: parent,
    allow: ["Task"],
    rows: [{ id: "subagents", plugin: SubagentsService, config: { timeout: 1 } }],
  });
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: child });
  const agent = await stack.agents.create({ agent_id: "p" });
  agent.send("Go");
  await agent.idle();
  const events = await stack.sessions.read("p");
  assert.deepStrictEqual(results(events), [["t1", true, "cancelled", "p.sub-1"]]);
  const childEnd = (await stack.sessions.read("p.sub-1")).at(-1)!;
  assert.deepStrictEqual(childEnd.payload, {
    status: "cancelled",
    error: {
      code: "Cancelled",
      message: "the subagent ran out of its time budget (1 s, subagents.timeout)",
    },
  });
  assert.equal(stack.agents.get("p.sub-1"), undefined);
});

Deno.test("after a restart a re-executed Task call finds its own child's closed turn, and ids are never reused", async () => {
  const args = { description: "Find", prompt: "Find it", subagent_type: "general-purpose" };
  const parent = scriptedAdapter([
    textReply("Resumed."),
    toolCallsReply([{ id: "t2", name: "Task", args: { ...args, prompt: "Again" } }]),
    textReply("Twice."),
  ]);
  const child = scriptedAdapter([textReply("Found again.")]);
  await using stack = await createAgentStack({
    adapter: parent,
    allow: ["Task"],
    rows: [{ id: "subagents", plugin: SubagentsService, config: {} }],
  });
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: child });
  const log = stack.sessions;
  const append = (id: string, type: string, payload: unknown) => log.append(id, { type, payload });
  // What a process left when it died after the child finished and before the parent logged the result.
  await log.create({ session_id: "p", meta: { agent_id: "p" } });
  await append("p", "turn/start", { agent_id: "p" });
  await append("p", "step/start", { step: 1 });
  await append("p", "user/message", { content: "Go" });
  await append("p", "assistant/message", {
    parts: [{ type: "tool_call", id: "t1", name: "Task", args }],
  });
  await append("p", "tool/call", { id: "t1", name: "Task", args });
  await log.create({
    session_id: "p.sub-1",
    meta: {
      agent_id: "p.sub-1",
      unattended: true,
      subagent: {
        parent_session_id: "p",
        parent_agent_id: "p",
        call_id: "t1",
        type: "general-purpose",
        description: "Find",
        depth: 1,
      },
    },
  });
  await append("p.sub-1", "turn/start", { agent_id: "p.sub-1" });
  await append("p.sub-1", "step/start", { step: 1 });
  await append("p.sub-1", "user/message", { content: "Find it" });
  await append("p.sub-1", "assistant/message", { parts: [{ type: "text", text: "Found it." }] });
  await append("p.sub-1", "step/end", {
    step: 1,
    usage: { input_tokens: 7, output_tokens: 3 },
    finish_reason: "stop",
  });
  await append("p.sub-1", "turn/end", { status: "completed" });
  // A session a client made at the next child id before any Task asked for it.
  await log.create({ session_id: "p.sub-2", meta: { agent_id: "p.sub-2" } });

  const agent = await stack.agents.create({ agent_id: "p" });
  assert.equal(agent.wake(), true);
  await agent.idle();
  agent.send("Again");
  await agent.idle();

  const events = await log.read("p");
  assert.deepStrictEqual(results(events), [
    ["t1", false, "completed", "p.sub-1"],
    ["t2", false, "completed", "p.sub-3"],
  ]);
  const first = events.find((event) => event.type === "tool/result")!.payload as {
    content: unknown;
  };
  assert.deepStrictEqual(first.content, [
    { type: "text", text: "Found it." },
    {
      type: "text",
      text: 'Subagent session "p.sub-1" completed after 1 step (7 input, 3 output tokens).',
    },
  ]);
  // The finished child was not run again; only the new call's child asked the model.
  assert.deepStrictEqual(child.requests.map((request) => request.messages.length), [1]);
  assert.equal(await log.head("p.sub-1"), 7);
  assert.deepStrictEqual((await log.read("p.sub-2")).map((event) => event.type), [
    "session/created",
  ]);
});

Deno.test("a child past its type's max_steps ends rejected, routed to the type's role and model", async () => {
  const parent = scriptedAdapter([
    toolCallsReply([{
      id: "t1",
      name: "Task",
      args: { description: "Loop", prompt: "Keep going", subagent_type: "short" },
    }]),
    textReply("Stopped."),
  ]);
  const child = scriptedAdapter([
    toolCallsReply([{
      id: "c1",
      name: "Task",
      args: { description: "x", prompt: "", subagent_type: "short" },
    }]),
  ]);
  await using stack = await createAgentStack({
    adapter: parent,
    allow: ["Task"],
    rows: [{
      id: "subagents",
      plugin: SubagentsService,
      config: {
        types: [{
          name: "short",
          description: "One step",
          max_steps: 1,
          role: "compactor",
          model: "vendor/small-model",
        }],
      },
    }],
  });
  // The child's requests go to the type's role (compactor here), with the type's model.
  stack.ctx.get(Llm).register(stack.ctx, { role: "compactor", adapter: child });
  const agent = await stack.agents.create({ agent_id: "p" });
  agent.send("Go");
  await agent.idle();
  assert.deepStrictEqual(results(await stack.sessions.read("p")), [
    ["t1", true, "rejected", "p.sub-1"],
  ]);
  assert.deepStrictEqual((await stack.sessions.read("p.sub-1")).at(-1)!.payload, {
    status: "rejected",
    error: {
      code: "PreStepRejected",
      message:
        'Step 2 was rejected by agent/pre_step: the subagent type "short" allows at most 1 step',
    },
  });
  assert.deepStrictEqual(child.requests.map((request) => request.model), ["vendor/small-model"]);
});

Deno.test("subagentsConfig refuses an acp type without a command and duplicate type names", () => {
  const acp = subagentsConfig.safeParse({
    types: [{ name: "outside", description: "External", provider: "acp" }],
  });
  assert.deepStrictEqual(
    acp.success ? [] : acp.error.issues.map((issue) => [issue.path.join("."), issue.message]),
    [["types.0.command", "a type with provider acp needs a command (the external agent's argv)"]],
  );
  const twice = subagentsConfig.safeParse({
    types: [{ name: "a", description: "A" }, { name: "a", description: "B" }],
  });
  assert.deepStrictEqual(
    twice.success ? [] : twice.error.issues.map((issue) => [issue.path.join("."), issue.message]),
    [["types", "type names must be unique"]],
  );
});
