// deno-lint-ignore-file no-console
/**
 * ACP benchmark, in one run beside the socket: the time from sending a prompt to the first streamed text chunk,
 * over the same agent stack (memory store, the default loop, a scripted model that answers at once).
 *
 * - **socket** (the baseline): a subscribed WebSocket client sends a `message` frame and waits for the first
 *   `assistant/chunk` event frame.
 * - **acp**: the ACP SDK client sends `session/prompt` over an in-process NDJSON byte pipe and waits for the first
 *   `agent_message_chunk` notification.
 *
 * Each round runs both once per iteration, the order rotated per round, each turn waited to its end before the
 * next; figures are medians over rounds and the ratio the median of per-round ratios.
 *
 * Run: deno run -A bench/acp_first_chunk.ts [--quick]
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
import { agentsGateway, wsConfig, WsServer } from "@terret/ws";
import { serveAcp } from "@terret/acp";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 5 : 11;
const PER_ROUND = quick ? 10 : 30;
const TOKEN = "bench-token-0123456789abcdef";
const ROOT = "/bench/work";

const turns = (ROUNDS + 1) * PER_ROUND * 2;
const stack = await createAgentStack({
  adapter: scriptedAdapter(Array.from({ length: turns }, () => textReply(["first", " rest"]))),
});
const server = await WsServer.start({
  ctx: stack.ctx,
  sessions: stack.sessions,
  agents: agentsGateway(stack.agents, stack.sessions),
  config: wsConfig.parse({
    port: 0,
    tokens: [{ token: TOKEN, agents: ["*"] }],
    heartbeat_seconds: 0,
  }),
});

// The socket client: one agent, subscribed from its head.
const socket = new WebSocket(`${server.url}/v1/agents/bench-ws/stream`, {
  headers: { authorization: `Bearer ${TOKEN}` },
});
await new Promise((resolve, reject) => {
  socket.onopen = resolve;
  socket.onerror = reject;
});
let onFrame: (type: string) => void = () => {};
socket.onmessage = (message) => {
  const frame = JSON.parse(String(message.data));
  if (frame.type === "event") onFrame(frame.event.type);
};
socket.send(JSON.stringify({ type: "subscribe", ref: null, from_seq: 1 }));

async function socketTurn(): Promise<number> {
  const first = Promise.withResolvers<number>();
  const end = Promise.withResolvers<void>();
  let seen = false;
  onFrame = (type) => {
    if (type === "assistant/chunk" && !seen) {
      seen = true;
      first.resolve(performance.now());
    }
    if (type === "turn/end") end.resolve();
  };
  const start = performance.now();
  socket.send(JSON.stringify({ type: "message", ref: null, content: "hi" }));
  const at = await first.promise;
  await end.promise;
  return at - start;
}

// The ACP client over an in-process byte pipe.
const up = new TransformStream<Uint8Array, Uint8Array>();
const down = new TransformStream<Uint8Array, Uint8Array>();
const acpServer = serveAcp(acp.ndJsonStream(down.writable, up.readable), {
  sessions: stack.sessions,
  agents: stack.agents,
  roots: [ROOT],
});
let onChunk: () => void = () => {};
const connection = acp.client({ name: "bench" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") onChunk();
  })
  .connect(acp.ndJsonStream(up.writable, down.readable));
await connection.agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
});
const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
  cwd: ROOT,
  mcpServers: [],
});

async function acpTurn(): Promise<number> {
  const first = Promise.withResolvers<number>();
  let seen = false;
  onChunk = () => {
    if (!seen) {
      seen = true;
      first.resolve(performance.now());
    }
  };
  const start = performance.now();
  const answer = connection.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "hi" }],
  });
  const at = await first.promise;
  await answer;
  return at - start;
}

const cases = [{ name: "socket", turn: socketTurn }, { name: "acp", turn: acpTurn }];
const timings = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = -1; round < ROUNDS; round++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(k + Math.max(round, 0)) % cases.length]!;
    const samples: number[] = [];
    for (let i = 0; i < PER_ROUND; i++) samples.push(await c.turn());
    if (round >= 0) timings.get(c.name)!.push(median(samples)); // round -1 is the warm-up
  }
}
const ratio = median(
  timings.get("acp")!.map((value, round) => value / timings.get("socket")![round]!),
);
const ms = (name: string) => median(timings.get(name)!).toFixed(3);
console.log(`time to first chunk, ${ROUNDS} rounds x ${PER_ROUND} turns (median of round medians)`);
console.log(`  socket (baseline)  ${ms("socket")} ms`);
console.log(`  acp                ${ms("acp")} ms`);
console.log(`  acp / socket       ${ratio.toFixed(2)}x (target: at most 1.20x)`);

// Closing the client's side does not end the in-process pipe's other side: close the server's connection too.
connection.close();
acpServer.close();
await acpServer.closed.catch(() => {});
socket.close();
await server.close();
await stack.dispose();
