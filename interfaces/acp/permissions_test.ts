import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedTool } from "@terret/core/testing";
import { type AcpVerdict, serveAcp } from "./mod.ts";

const ROOT = "/work/project";

Deno.test("a parked call is asked with four options, and each answer (or a cancel) becomes the verdict it stands for", async () => {
  await using stack = await createAgentStack();
  // The asked call's kind comes from its tool's metadata.
  stack.tools.register(stack.ctx, scriptedTool("Edit", { kind: "edit" }).definition);
  const verdicts: { sessionId: string; requestId: string; verdict: AcpVerdict }[] = [];
  const resolved = Promise.withResolvers<void>();
  const approvals = {
    async resolve(sessionId: string, requestId: string, verdict: AcpVerdict): Promise<void> {
      await stack.sessions.append(sessionId, {
        type: "approval/resolved",
        payload: { request_id: requestId, decision: verdict.decision, reason: verdict.reason },
      });
      verdicts.push({ sessionId, requestId, verdict });
      if (verdicts.length === 5) resolved.resolve();
    },
  };
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  serveAcp(acp.ndJsonStream(down.writable, up.readable), {
    sessions: stack.sessions,
    agents: stack.agents,
    tools: stack.tools,
    roots: [ROOT],
    approvals,
  });
  const answers: acp.RequestPermissionResponse["outcome"][] = [
    { outcome: "selected", optionId: "allow_once" },
    { outcome: "selected", optionId: "allow_always" },
    { outcome: "selected", optionId: "reject_once" },
    { outcome: "selected", optionId: "reject_always" },
    { outcome: "cancelled" },
  ];
  const asked: acp.RequestPermissionRequest[] = [];
  const connection = acp.client({ name: "editor" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: answers[asked.length - 1]! };
    })
    .connect(acp.ndJsonStream(up.writable, down.readable));
  try {
    await connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientInfo: { name: "editor", version: "1.0.0" },
    });
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    });
    for (let index = 0; index < answers.length; index++) {
      await stack.sessions.append(sessionId, {
        type: "approval/requested",
        payload: {
          request_id: `r${index}`,
          call: { id: `c${index}`, name: "Edit", args: { file_path: `${ROOT}/a.txt` } },
        },
      });
    }
    await resolved.promise;
    assert.deepStrictEqual(asked[0], {
      sessionId,
      toolCall: {
        toolCallId: "c0",
        title: "Edit",
        kind: "edit",
        status: "pending",
        rawInput: { file_path: `${ROOT}/a.txt` },
      },
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
      ],
    });
    const by = { kind: "acp", client: "editor" };
    assert.deepStrictEqual(
      verdicts.sort((a, b) => a.requestId.localeCompare(b.requestId)).map((entry) => [
        entry.requestId,
        entry.verdict,
      ]),
      [
        ["r0", {
          decision: "allow",
          remember: false,
          reason: "allowed once by the ACP client",
          by,
        }],
        ["r1", {
          decision: "allow",
          remember: true,
          reason: "always allowed by the ACP client",
          by,
        }],
        ["r2", { decision: "deny", remember: false, reason: "rejected by the ACP client", by }],
        ["r3", {
          decision: "deny",
          remember: true,
          reason: "always rejected by the ACP client",
          by,
        }],
        [
          "r4",
          {
            decision: "deny",
            remember: false,
            reason: "the ACP client cancelled the permission request",
            by,
          },
        ],
      ],
    );
    // Each parked call was asked exactly once, even though the tail saw its resolution afterwards.
    assert.deepStrictEqual(asked.map((params) => params.toolCall.toolCallId), [
      "c0",
      "c1",
      "c2",
      "c3",
      "c4",
    ]);
  } finally {
    connection.close();
  }
});
