/**
 * Session modes over ACP: `ask`, `auto-edit` and `read-only`, each set with `session/set_mode` as a durable
 * `policy/updated`, announced with `current_mode_update`, and restored by `session/load`.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ApprovalsKey } from "@terret/core";
import {
  createAgentStack,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { ACP_MODES, type AcpApprovals, READ_ONLY_TOOLS } from "@terret/acp";
import { brief, connectPair, initialize } from "./acp_client.ts";

const ROOT = "/work/project";

Deno.test("session modes: read-only narrows the tools, auto-edit allows parked edits without asking, and load restores the mode", async () => {
  const edit = scriptedTool("Edit", { approval: "policy", mutating: true, kind: "edit" });
  const bash = scriptedTool("Bash", { approval: "policy", mutating: true, kind: "execute" });
  const file = `${ROOT}/a.txt`;
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([{ id: "e1", name: "Edit", args: { file_path: file } }]),
      textReply("ro"),
      toolCallsReply([{ id: "e2", name: "Edit", args: { file_path: file } }]),
      toolCallsReply([{ id: "b1", name: "Bash", args: { command: "make" } }]),
      textReply("ae"),
    ]),
    allow: ["Edit", "Bash"],
    approvals: {},
  });
  stack.tools.register(stack.ctx, edit.definition);
  stack.tools.register(stack.ctx, bash.definition);
  const gate = stack.ctx.get(ApprovalsKey);
  const approvals: AcpApprovals = {
    async resolve(sessionId, requestId, verdict) {
      await gate.answer(sessionId, requestId, {
        decision: verdict.decision,
        by: { kind: "acp", ...(verdict.by.client === undefined ? {} : { id: verdict.by.client }) },
        reason: verdict.reason,
        remember: verdict.remember,
      });
    },
  };
  const asked: string[] = [];
  const live = connectPair(
    { ...stack, roots: [ROOT], approvals },
    (app) =>
      app.onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        asked.push(params.toolCall.toolCallId);
        return { outcome: { outcome: "selected", optionId: "reject_once" } };
      }),
  );
  let sessionId = "";
  try {
    await initialize(live.agent);
    const created = await live.agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    });
    sessionId = created.sessionId;
    assert.deepStrictEqual(created.modes, {
      currentModeId: "ask",
      availableModes: [...ACP_MODES],
    });
    assert.deepStrictEqual(
      ACP_MODES.map((mode) => mode.id),
      ["ask", "auto-edit", "read-only"],
    );

    assert.deepStrictEqual(
      await live.agent.request(acp.methods.agent.session.setMode, {
        sessionId,
        modeId: "read-only",
      }),
      {},
    );
    assert.deepStrictEqual(
      await live.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "edit" }],
      }),
      { stopReason: "end_turn" },
    );
    await live.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto-edit" });
    assert.deepStrictEqual(
      await live.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "edit again" }],
      }),
      { stopReason: "end_turn" },
    );
    assert.deepStrictEqual(live.updates.map(({ update }) => brief(update)), [
      "current_mode_update read-only",
      "user_message_chunk edit",
      "tool_call e1 edit in_progress",
      "tool_call_update e1 failed",
      "agent_message_chunk ro",
      "current_mode_update auto-edit",
      "user_message_chunk edit again",
      "tool_call e2 edit in_progress",
      "tool_call_update e2 completed",
      "tool_call b1 execute in_progress",
      "tool_call_update b1 failed",
      "agent_message_chunk ae",
    ]);
    // Only the Bash call was asked about; the edit ran once, under auto-edit.
    assert.deepStrictEqual(asked, ["b1"]);
    assert.equal(edit.calls.length, 1);
    assert.equal(bash.calls.length, 0);
    const log = await stack.sessions.read(sessionId);
    assert.deepStrictEqual(
      log.flatMap((event) =>
        event.type === "policy/updated"
          ? [event.payload]
          : event.type === "approval/resolved"
          ? [{ ...(event.payload as object), request_id: "-" }]
          : []
      ),
      [
        { allow: [...READ_ONLY_TOOLS], mode: "read-only" },
        { allow: ["*"], mode: "auto-edit" },
        {
          request_id: "-",
          decision: "allow",
          by: { kind: "acp", id: "test-client" },
          reason: "allowed by the ACP client's auto-edit mode",
        },
        {
          request_id: "-",
          decision: "deny",
          by: { kind: "acp", id: "test-client" },
          reason: "rejected by the ACP client",
        },
      ],
    );
    const failure = await live.agent.request(acp.methods.agent.session.setMode, {
      sessionId,
      modeId: "yolo",
    }).then(() => undefined, (error: acp.RequestError) => error);
    assert.deepStrictEqual(
      { code: failure?.code, message: failure?.message, data: failure?.data },
      {
        code: -32602,
        message:
          `Cannot set the mode of session "${sessionId}": no mode "yolo" (ask, auto-edit or ` +
          "read-only)",
        data: { field: "modeId", modeId: "yolo" },
      },
    );
  } finally {
    live.connection.close();
  }
  const again = connectPair({ ...stack, roots: [ROOT], approvals });
  try {
    await initialize(again.agent);
    const loaded = await again.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: ROOT,
      mcpServers: [],
    });
    assert.deepStrictEqual(loaded.modes?.currentModeId, "auto-edit");
    assert.deepStrictEqual(again.updates, live.updates);
  } finally {
    again.connection.close();
  }
});
