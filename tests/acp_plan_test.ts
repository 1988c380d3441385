/**
 * ACP `plan` updates from TodoWrite: a scripted model calls a tool named TodoWrite (a stand-in with TodoWrite's
 * input), and each successful call is projected as the whole plan, live and on `session/load`; a failed one is not.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { z } from "zod";
import { createAgentStack, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";
import { brief, connectPair, initialize, newSession } from "./acp_client.ts";

const ROOT = "/work/project";

const todos = (...items: [string, string][]) => ({
  todos: items.map(([content, status]) => ({ content, status, activeForm: `Doing ${content}` })),
});

Deno.test("each successful TodoWrite call streams the whole plan, and session/load replays it", async () => {
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([{
        id: "t1",
        name: "TodoWrite",
        args: todos(["Read the code", "in_progress"], ["Fix the bug", "pending"]),
      }]),
      toolCallsReply([{ id: "t2", name: "TodoWrite", args: { todos: "not a list" } }]),
      toolCallsReply([{
        id: "t3",
        name: "TodoWrite",
        args: todos(["Read the code", "completed"], ["Fix the bug", "in_progress"]),
      }]),
      textReply("on it"),
    ]),
    allow: ["TodoWrite"],
  });
  // A stand-in with TodoWrite's input; the durable tool/call is the storage.
  stack.tools.register(stack.ctx, {
    name: "TodoWrite",
    description: "Records the task list",
    parameters: z.object({
      todos: z.array(z.object({
        content: z.string(),
        status: z.enum(["pending", "in_progress", "completed"]),
        activeForm: z.string(),
      })),
    }),
    mutating: false,
    approval: "never",
    handler: () => "Todos updated",
  });
  const live = connectPair({ ...stack, roots: [ROOT] });
  let sessionId = "";
  try {
    await initialize(live.agent);
    sessionId = await newSession(live.agent, ROOT);
    await live.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "plan it" }],
    });
    assert.deepStrictEqual(live.updates.map(({ update }) => brief(update)), [
      "user_message_chunk plan it",
      "tool_call t1 other in_progress",
      "tool_call_update t1 completed",
      "plan in_progress:Read the code, pending:Fix the bug",
      "tool_call t2 other in_progress",
      "tool_call_update t2 failed",
      "tool_call t3 other in_progress",
      "tool_call_update t3 completed",
      "plan completed:Read the code, in_progress:Fix the bug",
      "agent_message_chunk on it",
    ]);
    assert.deepStrictEqual(live.updates[3]!.update, {
      sessionUpdate: "plan",
      entries: [
        { content: "Read the code", priority: "medium", status: "in_progress" },
        { content: "Fix the bug", priority: "medium", status: "pending" },
      ],
    });
  } finally {
    live.connection.close();
  }
  const again = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(again.agent);
    await again.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: ROOT,
      mcpServers: [],
    });
    assert.deepStrictEqual(again.updates, live.updates);
  } finally {
    again.connection.close();
  }
});
