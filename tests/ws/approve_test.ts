/**
 * The `approve` frame over the real `terret-ws` plugin beside the real agents service, loop and approvals row: the
 * request reaches the client as an ordinary event, a connection that joins later sees it in replay and answers
 * it (with `remember`), and every bad answer gets its error frame and appends nothing.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import {
  type AgentStack,
  createAgentStack,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { tokenId, WsInterface, WsServiceKey } from "@terret/ws";
import { type Frame, WsClient } from "./_clients.ts";
import { ORCH_TOKEN, TOKEN, TOKENS } from "./_harness.ts";

const eventOf = (frame: Frame): SessionEvent => frame.event as SessionEvent;
const isType = (type: string) => (frame: Frame): boolean =>
  frame.type === "event" && eventOf(frame).type === type;

async function connect(port: number, agentId: string, token = TOKEN): Promise<WsClient> {
  const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`, {
    token,
  });
  assert.equal((await client.next()).type, "hello");
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
  return client;
}

async function mount(): Promise<{ stack: AgentStack; port: number; ran: () => number }> {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "npm test --watch=false" } }]),
    toolCallsReply([{ id: "c2", name: "Bash", args: { command: "npm test" } }]),
    textReply("Green."),
  ]);
  const stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = scriptedTool("Bash", { approval: "always", concurrency: "serial" });
  stack.tools.register(stack.ctx, tool.definition);
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  return { stack, port: stack.ctx.get(WsServiceKey).port, ran: () => tool.calls.length };
}

Deno.test("approve over the socket: a later connection sees the open request in replay and answers it", async () => {
  const { stack, port, ran } = await mount();
  await using _ = stack;
  const first = await connect(port, "op");
  first.send({ type: "message", content: "Test it", ref: "m" });
  const asked = eventOf((await first.readUntil(isType("approval/requested"))).at(-1)!);
  const requestId = (asked.payload as { request_id: string }).request_id;
  await first.close();
  assert.equal(ran(), 0);

  const later = await connect(port, "op");
  const replayed = await later.readUntil(isType("approval/requested"));
  assert.deepStrictEqual(eventOf(replayed.at(-1)!), asked);
  // Bad answers: each an error frame, nothing appended.
  const bad: [Record<string, unknown>, Frame][] = [
    [
      { type: "approve", request_id: "nope", decision: "allow", ref: "b1" },
      {
        type: "error",
        ref: "b1",
        code: "unknown_request",
        message: 'Cannot answer approval request "nope": session "op" has no such request',
      },
    ],
    [
      { type: "approve", request_id: requestId, decision: "maybe", ref: "b2" },
      {
        type: "error",
        ref: "b2",
        code: "invalid_field",
        message:
          'Cannot read the "approve" frame: "decision" must be "allow" or "deny", got "maybe"',
      },
    ],
    [
      { type: "approve", request_id: requestId, decision: "allow", remember: "yes", ref: "b3" },
      {
        type: "error",
        ref: "b3",
        code: "invalid_field",
        message: 'Cannot read the "approve" frame: "remember" must be a boolean, got "yes"',
      },
    ],
  ];
  for (const [frame, answer] of bad) {
    later.send(frame);
    assert.deepStrictEqual(await later.next(), answer);
  }
  assert.equal(
    (await stack.sessions.read("op")).filter((e) => e.type === "approval/resolved").length,
    0,
  );

  later.send({
    type: "approve",
    request_id: requestId,
    decision: "allow",
    remember: true,
    ref: "ok",
  });
  const rest = await later.readUntil(isType("approval/requested"));
  assert.deepStrictEqual(rest.filter((frame) => frame.type !== "event"), [{
    type: "ack",
    ref: "ok",
  }]);
  const resolved = rest.filter(isType("approval/resolved")).map((frame) => eventOf(frame).payload);
  assert.deepStrictEqual(resolved, [{
    request_id: requestId,
    decision: "allow",
    by: { kind: "client", id: await tokenId(TOKEN) },
    rule: "Bash(npm test:*)",
  }]);
  // Bash is `always` here: the remembered rule does not admit it without always_can_be_ruled, so c2 asks too.
  assert.equal(rest.filter(isType("approval/requested")).length, 1);
  const second = (eventOf(rest.filter(isType("approval/requested"))[0]!).payload as {
    request_id: string;
  }).request_id;
  assert.equal(ran(), 1);
  // A second answer to the first request is refused and appends nothing.
  later.send({ type: "approve", request_id: requestId, decision: "deny", ref: "again" });
  assert.deepStrictEqual((await later.readUntil((frame) => frame.type === "error")).at(-1), {
    type: "error",
    ref: "again",
    code: "already_resolved",
    message: `Cannot answer approval request "${requestId}": it is already resolved (allow)`,
  });
  later.send({ type: "approve", request_id: second, decision: "deny", reason: "enough", ref: "d" });
  const end = await later.readUntil(isType("turn/end"));
  assert.deepStrictEqual(end.filter((frame) => frame.type !== "event"), [{
    type: "ack",
    ref: "d",
  }]);
  assert.equal(ran(), 1);
  await later.close();
});

Deno.test("approve over the socket: a token answers only its own agents' requests", async () => {
  const { stack, port } = await mount();
  await using _ = stack;
  const owner = await connect(port, "op");
  owner.send({ type: "message", content: "Test it" });
  const asked = eventOf((await owner.readUntil(isType("approval/requested"))).at(-1)!);
  const requestId = (asked.payload as { request_id: string }).request_id;
  // A token granted only orch-7.* cannot even open agent "op" (the same 401 as a wrong token)…
  await assert.rejects(
    WsClient.open(`ws://127.0.0.1:${port}/v1/agents/op/stream`, { token: ORCH_TOKEN }),
  );
  // …and on its own agent the request id of another session is unknown there.
  const other = await connect(port, "orch-7.a", ORCH_TOKEN);
  other.send({ type: "approve", request_id: requestId, decision: "allow", ref: "x" });
  assert.deepStrictEqual((await other.readUntil((frame) => frame.type === "error")).at(-1), {
    type: "error",
    ref: "x",
    code: "unknown_request",
    message:
      `Cannot answer approval request "${requestId}": session "orch-7.a" has no such request`,
  });
  assert.equal(
    (await stack.sessions.read("op")).filter((e) => e.type === "approval/resolved").length,
    0,
  );
  owner.send({ type: "cancel", reason: "done", ref: "c" });
  const end = await owner.readUntil(isType("turn/end"));
  assert.deepStrictEqual(
    end.filter(isType("approval/resolved")).map((frame) => eventOf(frame).payload),
    [{
      request_id: requestId,
      decision: "deny",
      by: { kind: "client" },
      reason: "the turn was cancelled while the call waited for approval",
    }],
  );
  assert.deepStrictEqual(eventOf(end.at(-1)!).payload, {
    status: "cancelled",
    error: { code: "Cancelled", message: "done" },
  });
  await other.close();
  await owner.close();
});
