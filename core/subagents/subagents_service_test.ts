import assert from "node:assert/strict";
import { Llm } from "../llm/llm_registry.ts";
import { createAgentStack } from "../loop/testing.ts";
import { scriptedAdapter, textReply, toolCallsReply } from "../llm/testing/scripted_adapter.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SubagentsService } from "./subagents_service.ts";

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
