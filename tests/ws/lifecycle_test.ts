/**
 * The agent lifecycle over the socket, on a real agents stack and a real `WsServer`: lazy session creation (what
 * `hello` says before one exists), the `dispose` frame, `GET /v1/agents` and `/v1/agents/{id}` (only what the token
 * is granted, paged), the per-token quota on new agents, and `/healthz` reporting saturation.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { WsInterface, WsServiceKey } from "@terret/ws";
import {
  type AgentStack,
  createAgentStack,
  type ScriptedAdapter,
  scriptedAdapter,
  textReply,
} from "@terret/core/testing";
import { type Frame, WsClient } from "./_clients.ts";
import { ORCH_TOKEN, TOKEN, TOKENS } from "./_harness.ts";

interface Stacked extends AsyncDisposable {
  readonly stack: AgentStack;
  readonly port: number;
  open(agentId: string, token?: string): Promise<{ client: WsClient; hello: Frame }>;
  get(path: string, token?: string): Promise<[number, unknown]>;
}

async function startStack(
  adapter: ScriptedAdapter,
  ws: Record<string, unknown> = {},
): Promise<Stacked> {
  const dir = await Deno.makeTempDir({ prefix: "terret-ws-lifecycle-" });
  const stack = await createAgentStack({ adapter, sqlitePath: `${dir}/sessions.db` });
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, ...ws }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  const port = stack.ctx.get(WsServiceKey).port;
  return {
    stack,
    port,
    async open(agentId, token = TOKEN) {
      const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`, {
        token,
      });
      return { client, hello: await client.next() };
    },
    async get(path, token = TOKEN) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await response.text();
      return [
        response.status,
        response.headers.get("content-type") === "application/json" ? JSON.parse(text) : text,
      ];
    },
    async [Symbol.asyncDispose]() {
      await stack.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

Deno.test("a connection that sends nothing leaves no session; hello reports the agent id as session id and head 0", async () => {
  await using h = await startStack(scriptedAdapter([]));
  const { client, hello } = await h.open("quiet");
  assert.deepStrictEqual(hello, {
    type: "hello",
    protocol: 1,
    agent_id: "quiet",
    session_id: "quiet",
    head_seq: 0,
  });
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  client.send({ type: "cancel", ref: "c" });
  assert.deepStrictEqual(await client.take(2), [{ type: "ack", ref: "s" }, {
    type: "ack",
    ref: "c",
  }]);
  await client.close();
  assert.deepStrictEqual(await h.stack.sessions.list(), []);
  assert.equal(h.stack.agents.count, 0);
  // The first frame that needs the session creates it, and the subscriber sees it from seq 1.
  const again = await h.open("quiet");
  again.client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  again.client.send({ type: "set_policy", allow: ["Read"], ref: "p" });
  const frames = await again.client.take(4);
  // Answers and events are separate flows (docs/protocol.md §5): each in its exact order.
  assert.deepStrictEqual(
    frames.filter((frame) => frame.type === "ack").map((frame) => frame.ref),
    ["s", "p"],
  );
  assert.deepStrictEqual(
    frames.filter((frame) => frame.type === "event").map((frame) =>
      (frame.event as SessionEvent).type
    ),
    ["session/created", "policy/updated"],
  );
  await again.client.close();
});

Deno.test("dispose evicts an idle agent (its session stays, the next message rehydrates it) and refuses a running one", async () => {
  const adapter = scriptedAdapter([
    [{ type: "message_start" }, { type: "gate", gate: "hold" }, ...textReply("One.").slice(1)],
    textReply("Two."),
  ]);
  await using h = await startStack(adapter);
  const { client } = await h.open("d1");
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  client.send({ type: "message", content: "Go", ref: "m" });
  await adapter.reached("hold");
  client.send({ type: "dispose", ref: "busy" });
  const refused = await client.readUntil((frame) => frame.type === "error");
  assert.deepStrictEqual(refused.at(-1), {
    type: "error",
    ref: "busy",
    code: "agent_busy",
    message:
      'Cannot dispose the agent: Cannot dispose agent "d1": a turn is running (cancel it and wait for idle first)',
  });
  adapter.open("hold");
  await client.readUntil(isTurnEnd);
  client.send({ type: "dispose", ref: "x" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "x" });
  assert.equal(h.stack.agents.get("d1"), undefined);
  const [status, summary] = await h.get("/v1/agents/d1");
  assert.equal(status, 200);
  assert.deepStrictEqual(
    { ...(summary as Record<string, unknown>), updated_at: "<at>" },
    {
      agent_id: "d1",
      session_id: "d1",
      head_seq: 9,
      status: "idle",
      title: null,
      resident: false,
      updated_at: "<at>",
      usage: {
        steps: 1,
        unknown_steps: 0,
        utility_calls: 0,
        input_tokens: 10,
        output_tokens: 5,
        cached_tokens: 0,
        cost: null,
      },
      plan: null,
    },
  );
  // Disposing an agent that is not resident is a no-op; a message rehydrates it on the same connection.
  client.send({ type: "dispose", ref: "again" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "again" });
  client.send({ type: "message", content: "More", ref: "m2" });
  await client.readUntil(isTurnEnd);
  assert.equal(h.stack.agents.get("d1")?.status, "idle");
  assert.equal(adapter.requests[1]!.messages.length, 3);
  await client.close();
});

Deno.test("GET /v1/agents lists only what the token is granted, paged by id; /v1/agents/{id} is 401 when not granted", async () => {
  await using h = await startStack(scriptedAdapter([]));
  for (const id of ["orch-7.b", "orch-7.a", "other", "orch-7.c"]) {
    await h.stack.agents.ensure(id);
  }
  await h.stack.agents.disposeAgent("orch-7.c");
  const [status, first] = await h.get("/v1/agents?limit=2", ORCH_TOKEN);
  assert.equal(status, 200);
  const page = first as { agents: Record<string, unknown>[]; next_after: string | null };
  assert.deepStrictEqual(
    [page.agents.map((agent) => [agent.agent_id, agent.resident, agent.head_seq]), page.next_after],
    [[["orch-7.a", true, 1], ["orch-7.b", true, 1]], "orch-7.b"],
  );
  const [, second] = await h.get("/v1/agents?limit=2&after=orch-7.b", ORCH_TOKEN);
  const rest = second as { agents: Record<string, unknown>[]; next_after: string | null };
  assert.deepStrictEqual(
    [rest.agents.map((agent) => [agent.agent_id, agent.resident, agent.status]), rest.next_after],
    [[["orch-7.c", false, "idle"]], null],
  );
  const [, all] = await h.get("/v1/agents");
  assert.deepStrictEqual(
    (all as { agents: { agent_id: string }[] }).agents.map((agent) => agent.agent_id),
    ["orch-7.a", "orch-7.b", "orch-7.c", "other"],
  );
  assert.deepStrictEqual(await h.get("/v1/agents/other", ORCH_TOKEN), [401, "unauthorized"]);
  assert.deepStrictEqual(await h.get("/v1/agents", "not-a-token-at-all-000"), [
    401,
    "unauthorized",
  ]);
  assert.deepStrictEqual(await h.get("/v1/agents/none"), [404, "no such agent"]);
  assert.deepStrictEqual(await h.get("/v1/agents?limit=0"), [
    400,
    "invalid limit: it must be an integer from 1 to 1000",
  ]);
});

Deno.test("max_agents_per_token refuses one new agent too many with quota_exceeded; existing agents stay usable", async () => {
  await using h = await startStack(scriptedAdapter([]), {
    max_agents_per_token: 2,
    agents_window_seconds: 3600,
  });
  for (const id of ["q1", "q2"]) {
    const { client } = await h.open(id);
    client.send({ type: "set_policy", allow: ["Read"], ref: "p" });
    assert.deepStrictEqual(await client.next(), { type: "ack", ref: "p" });
    await client.close();
  }
  const { client } = await h.open("q3");
  client.send({ type: "set_policy", allow: ["Read"], ref: "p" });
  assert.deepStrictEqual(await client.next(), {
    type: "error",
    ref: "p",
    code: "quota_exceeded",
    message:
      'Cannot set the policy: Cannot create agent "q3": this token created 2 agents in the last 3600 s ' +
      "(interfaces.ws.max_agents_per_token); retry in 3600 s",
  });
  await client.close();
  assert.deepStrictEqual((await h.stack.sessions.list()).sort(), ["q1", "q2"]);
  const existing = await h.open("q1");
  existing.client.send({ type: "set_policy", allow: ["Grep"], ref: "p" });
  assert.deepStrictEqual(await existing.client.next(), { type: "ack", ref: "p" });
  await existing.client.close();
});

Deno.test("/healthz answers 503 naming what is saturated, and 200 once it is not", async () => {
  await using h = await startStack(scriptedAdapter([]), { max_connections: 2 });
  const health = async (): Promise<[number, string]> => {
    const response = await fetch(`http://127.0.0.1:${h.port}/healthz`);
    return [response.status, await response.text()];
  };
  assert.deepStrictEqual(await health(), [200, '{"status":"ok"}']);
  const a = await h.open("h1");
  const b = await h.open("h2");
  assert.deepStrictEqual(await health(), [
    503,
    '{"status":"saturated","saturated":["connections"]}',
  ]);
  await a.client.close();
  assert.deepStrictEqual(await health(), [200, '{"status":"ok"}']);
  await b.client.close();
});
