// deno-lint-ignore-file no-console
/**
 * Live text latency under redaction: the time from the moment the model emits the first text delta beyond the
 * streaming scrubber's hold-back window to the moment a socket client receives the first `assistant/chunk` frame
 * after it. A real `interfaces.ws` server, the default loop, the `redaction` row (default patterns and window, plus
 * a registered literal as the credentials row registers keys), every event durable in SQLite, and a scripted model
 * that stops at a gate after a first delta shorter than the window (so the scrubber holds all of it) and, when the
 * gate opens, streams a delta that carries the text past the window, then the rest of a 40-delta reply.
 *
 * The baseline is the same stack with no redaction row: there the first delta is already a chunk, and the figure
 * is the time from the gate opening to the next chunk frame. Each round runs both cases, the order rotated per
 * round; p50 and p99 are over every run of a case, and the ratio is the median of per-round median ratios.
 *
 * Run: deno run -A bench/live_text_latency.ts [--quick]
 *
 * @module
 */
import { RedactionKey, redactionPlugin } from "@terret/core";
import {
  createAgentStack,
  scriptedAdapter,
  type ScriptItem,
  textReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 4 : 10;
const PER_ROUND = quick ? 10 : 30;
const TOKEN = "bench-token-0123456789abcdefghij";
const SECRET = "opal-7Qz-river-88-lantern";
const FIRST = "The first words of a long reply: ".padEnd(40, "."); // shorter than the 64-character window
const BEYOND = " and then the model goes on past the window, word after word, ".repeat(2); // 126 characters

function reply(turn: number): ScriptItem[] {
  const rest = Array.from({ length: 38 }, (_, i) => ({
    type: "text_delta" as const,
    text: ` word${i}`,
  }));
  return [
    { type: "message_start" },
    { type: "text_delta", text: FIRST },
    { type: "gate", gate: `beyond-${turn}` },
    { type: "text_delta", text: BEYOND },
    ...rest,
    ...textReply([]).slice(1),
  ];
}

interface Case {
  readonly name: string;
  readonly run: () => Promise<number>;
  readonly close: () => Promise<void>;
}

async function makeCase(name: string, scrub: boolean, turns: number): Promise<Case> {
  const adapter = scriptedAdapter(Array.from({ length: turns }, (_, turn) => reply(turn)));
  const stack = await createAgentStack({ adapter, sqlitePath: `${dir}/${name}.db` });
  if (scrub) stack.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
  stack.ctx.plugin(WsInterface, {
    port: 0,
    tokens: [{ token: TOKEN, agents: ["*"] }],
    heartbeat_seconds: 0,
  }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  if (scrub) stack.ctx.get(RedactionKey).addSecret(stack.ctx, SECRET);
  const port = stack.ctx.get(WsServiceKey).port;
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/agents/live-${name}/stream`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let chunks: number[] = []; // arrival times of this turn's chunk frames
  let waiter: (() => void) | undefined;
  let ended = Promise.withResolvers<void>();
  socket.onmessage = (message) => {
    const frame = JSON.parse(String(message.data));
    if (frame.type !== "event") return;
    if (frame.event.type === "assistant/chunk") {
      chunks.push(performance.now());
      waiter?.();
    }
    if (frame.event.type === "turn/end") ended.resolve();
  };
  const chunksReach = async (count: number): Promise<void> => {
    while (chunks.length < count) await new Promise<void>((resolve) => waiter = resolve);
  };
  socket.send(JSON.stringify({ type: "subscribe", ref: null, from_seq: 1 }));
  let turn = 0;
  const run = async (): Promise<number> => {
    chunks = [];
    ended = Promise.withResolvers<void>();
    const gate = `beyond-${turn++}`;
    socket.send(JSON.stringify({ type: "message", ref: null, content: "Tell me a long story" }));
    await adapter.reached(gate, 60_000);
    // Without a scrubber the first delta is a chunk already; with one, the window holds all of it.
    if (!scrub) await chunksReach(1);
    if (scrub && chunks.length !== 0) {
      throw new Error("The scrubber let text within its window through");
    }
    const before = chunks.length;
    const opened = performance.now();
    adapter.open(gate);
    await chunksReach(before + 1);
    const latency = chunks[before]! - opened;
    await ended.promise;
    return latency;
  };
  const close = async (): Promise<void> => {
    const closed = new Promise((resolve) => socket.onclose = resolve);
    socket.close();
    await closed;
    await stack.dispose();
  };
  return { name, run, close };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const dir = await Deno.makeTempDir({ prefix: "terret-bench-live-" });
const turns = (ROUNDS + 1) * PER_ROUND;
const cases = [
  await makeCase("none", false, turns),
  await makeCase("scrubber", true, turns),
];
const all = new Map<string, number[]>(cases.map((c) => [c.name, []]));
const medians = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = -1; round < ROUNDS; round++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(k + Math.max(round, 0)) % cases.length]!;
    const samples: number[] = [];
    for (let i = 0; i < PER_ROUND; i++) samples.push(await c.run());
    if (round < 0) continue; // the warm-up round
    all.get(c.name)!.push(...samples);
    medians.get(c.name)!.push(median(samples));
  }
}
for (const c of cases) await c.close();
await Deno.remove(dir, { recursive: true });

const fmt = (name: string): string => {
  const values = all.get(name)!;
  return `p50 ${percentile(values, 0.5).toFixed(2)} ms  p99 ${
    percentile(values, 0.99).toFixed(2)
  } ms`;
};
const ratio = median(
  medians.get("scrubber")!.map((value, round) => value / medians.get("none")![round]!),
);
console.log(
  `first token beyond the window -> first assistant/chunk frame on the socket, ${ROUNDS} rounds x ${PER_ROUND} turns`,
);
console.log(`  no scrubber (baseline)     ${fmt("none")}`);
console.log(`  redaction row (streaming)  ${fmt("scrubber")}`);
console.log(
  `  scrubber / none            ${
    ratio.toFixed(2)
  }x (p50 of per-round medians; target: p99 under 200 ms)`,
);
