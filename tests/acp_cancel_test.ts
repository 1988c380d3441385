/**
 * `session/cancel` through the SDK's client against the real loop: mid-stream the prompt answers `cancelled` after
 * the chunks streamed so far; mid-tool every running call is reported as a failed `tool_call_update`.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import {
  createAgentStack,
  scriptedAdapter,
  scriptedTool,
  toolCallsReply,
} from "@terret/core/testing";
import { brief, connectPair, initialize, newSession, until } from "./acp_client.ts";

const ROOT = "/work/project";

Deno.test("session/cancel mid-stream answers cancelled after the chunks streamed so far", async () => {
  const adapter = scriptedAdapter([[
    { type: "message_start" },
    { type: "text_delta", text: "Hel" },
    { type: "gate", gate: "mid" },
    { type: "text_delta", text: "lo" },
    { type: "message_stop", finishReason: "stop" },
  ]]);
  await using stack = await createAgentStack({ adapter });
  const { connection, agent, updates } = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(agent);
    const sessionId = await newSession(agent, ROOT);
    const turn = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "talk" }],
    });
    await adapter.reached("mid");
    await until(() => updates.length === 2, "the first chunk");
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.deepStrictEqual(await turn, { stopReason: "cancelled" });
    assert.deepStrictEqual(updates.map(({ update }) => brief(update)), [
      "user_message_chunk talk",
      "agent_message_chunk Hel",
    ]);
    const end = (await stack.sessions.read(sessionId)).findLast((event) =>
      event.type === "turn/end"
    );
    assert.equal((end?.payload as { status: string }).status, "cancelled");
  } finally {
    connection.close();
  }
});

Deno.test("session/cancel mid-tool answers cancelled and reports every running call as failed", async () => {
  const read = scriptedTool("Read", { held: true, kind: "read" });
  const grep = scriptedTool("Grep", { held: true, kind: "search" });
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([
        { id: "c1", name: "Read", args: { file_path: `${ROOT}/a.txt` } },
        { id: "c2", name: "Grep", args: { pattern: "x" } },
      ]),
    ]),
    allow: ["Read", "Grep"],
  });
  stack.tools.register(stack.ctx, read.definition);
  stack.tools.register(stack.ctx, grep.definition);
  const { connection, agent, updates } = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(agent);
    const sessionId = await newSession(agent, ROOT);
    const turn = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "look" }],
    });
    await read.started(1);
    await grep.started(1);
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.deepStrictEqual(await turn, { stopReason: "cancelled" });
    assert.deepStrictEqual(updates.map(({ update }) => brief(update)), [
      "user_message_chunk look",
      "tool_call c1 read in_progress",
      "tool_call c2 search in_progress",
      "tool_call_update c1 failed",
      "tool_call_update c2 failed",
    ]);
    const last = updates.at(-1)!.update;
    assert.deepStrictEqual(last.sessionUpdate === "tool_call_update" && last.content, [
      {
        type: "content",
        content: {
          type: "text",
          text:
            'The call to "Grep" was cancelled before it finished (cancelled by the ACP client); it ' +
            "may have had partial effects.",
        },
      },
    ]);
    // Neither call ran to its end: both handlers saw the abort.
    assert.deepStrictEqual(
      [read.calls[0]!.run.signal.aborted, grep.calls[0]!.run.signal.aborted],
      [true, true],
    );
  } finally {
    connection.close();
  }
});
