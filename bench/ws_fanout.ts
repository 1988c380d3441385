// deno-lint-ignore-file no-console
/**
 * Socket benchmark, in one run, side by side with the floor: a raw `Deno.serve` socket that sends the same bytes
 * (`{"type":"event","event":…}`, serialized once per event) straight from the store's commit feed, with no
 * per-connection stream, flow control, caps or frame cache.
 *
 * - **fan-out**: one busy agent appends chunk events as fast as it can; events per second delivered to 1 and to 50
 *   subscribers. The socket allows one connection per agent id, so the 50 subscribers connect as 50 observer ids
 *   that the benchmark's gateway maps onto the busy agent's session (exactly the fan-out path: 50 live tails of one
 *   session sharing one serialized frame per event).
 * - **replay**: 10,000 stored events to a reconnecting client (`subscribe` from 1), against the floor reading the
 *   same pages of stored events on connect and sending them.
 * - **slow reader**: the events per second delivered to one agent's subscriber alone, beside another agent whose
 *   reader keeps up, and beside another agent whose reader stopped reading (dropped as `lagged`).
 *
 * The clients run in a Worker (their own event loop); the store is in memory, so the figures are the socket's and
 * not the disk's. Every row runs in rounds, the order rotated per round; figures are medians over rounds and ratios
 * medians of per-round ratios. Both fan-out figures include the appends that feed them (the same `append` calls on
 * both sides); each round also times the appends alone, with nobody watching, and the "socket only" row subtracts
 * that round's append time from both sides: the ratio of what the sockets themselves cost.
 *
 * Run: deno run -A bench/ws_fanout.ts [--quick]
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { createContext } from "@terret/hames";
import { MemorySessionStore } from "@terret/core/sessions";
import { SessionLog } from "@terret/core";
import { type AgentGateway, type AgentLink, wsConfig, WsServer } from "@terret/ws";
import type { ClientJob, ClientReport } from "./_ws_clients.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 3 : 7;
const FANOUT_ONE = quick ? 5_000 : 20_000;
const FANOUT_MANY = quick ? 1_000 : 4_000;
const SUBSCRIBERS = 50;
const REPLAY = 10_000;
const SLOW_EVENTS = quick ? 2_000 : 10_000;
const TOKEN = "bench-token-0123456789abcdef";

const store = new MemorySessionStore();
const ctx = createContext({ mode: "production" });
const sessions = new SessionLog(ctx, store);
const text = "hello world, this is one streamed chunk of text";

// Observer ids `watch-N` read the busy agent's session; every other id is its own session.
const gateway: AgentGateway = {
  async open(agentId) {
    const sessionId = agentId.startsWith("watch-") ? "busy" : agentId;
    if (await sessions.head(sessionId) === 0) await sessions.create({ session_id: sessionId });
    const link: AgentLink = {
      agentId,
      sessionId,
      message: () => Promise.resolve(),
      steer: () => Promise.resolve(),
      cancel: () => Promise.resolve(),
      ready: () => Promise.resolve(),
      dispose: () => Promise.resolve(),
    };
    return link;
  },
  state: () => ({ status: "idle", resident: false }),
  figures: () => ({ resident: 0, busy: 0, max: 1 }),
};
const terret = await WsServer.start({
  ctx,
  sessions,
  agents: gateway,
  config: wsConfig.parse({
    port: 0,
    tokens: [{ token: TOKEN, agents: ["*"] }],
    heartbeat_seconds: 0,
    frame_rate: 10_000,
    max_connections: 10_000,
    max_connections_per_token: 10_000,
    max_connections_per_agent: 10_000,
  }),
});

// The floor: a commit listener that sends each event's frame to every raw socket of its session.
const rawSockets = new Map<string, Set<WebSocket>>();
store.onCommit((event) => {
  const sockets = rawSockets.get(event.session_id);
  if (sockets === undefined || sockets.size === 0) return;
  const frame = `{"type":"event","event":${JSON.stringify(event)}}`;
  for (const socket of sockets) socket.send(frame);
});
const raw = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
  const [, , session, mode] = new URL(request.url).pathname.split("/");
  const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout: 0 });
  socket.onopen = async () => {
    if (mode === "replay") {
      // The same pages the socket reads (1,000 events), sent as they come, with no flow control.
      for (let from = 1;;) {
        const page = await sessions.read(session!, { from_seq: from, limit: 1000 });
        for (const event of page) socket.send(`{"type":"event","event":${JSON.stringify(event)}}`);
        if (page.length < 1000) break;
        from = page.at(-1)!.seq + 1;
      }
    } else {
      let set = rawSockets.get(session!);
      if (set === undefined) rawSockets.set(session!, set = new Set());
      set.add(socket);
      socket.onclose = () => set!.delete(socket);
    }
  };
  return response;
});

const worker = new Worker(new URL("./_ws_clients.ts", import.meta.url).href, { type: "module" });

/** Posts a job; resolves `ready` once the clients are connected (and subscribed), `done` when all received. */
function job(spec: ClientJob): { ready: Promise<void>; done: Promise<number> } {
  const ready = Promise.withResolvers<void>();
  const done = Promise.withResolvers<number>();
  worker.onmessage = (message: MessageEvent<ClientReport>) => {
    const report = message.data;
    if (report.kind === "ready") ready.resolve();
    else if (report.kind === "done") done.resolve(report.at);
    else done.reject(new Error(`A client failed: ${report.message}`));
  };
  worker.postMessage(spec);
  return { ready: ready.promise, done: done.promise };
}

const now = (): number => performance.timeOrigin + performance.now();
const wsUrl = (id: string): string => `${terret.url}/v1/agents/${id}/stream`;
const rawUrl = (session: string, mode: string): string =>
  `ws://127.0.0.1:${raw.addr.port}/x/${session}/${mode}`;

/**
 * Appends `count` chunk events as a busy agent does, yielding to the event loop every `every` appends (a real
 * agent awaits its model stream; an in-memory store alone never yields, and then no socket could write).
 */
async function produce(session: string, count: number, payload = text, every = 100): Promise<void> {
  for (let i = 0; i < count; i++) {
    await sessions.append(session, {
      type: "assistant/chunk",
      payload: { kind: "text", text: payload },
    });
    if (i % every === every - 1) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Milliseconds to append `count` events to the busy session with nobody watching: the append path alone, which
 * both sockets' figures include.
 */
async function appendOnly(count: number): Promise<number> {
  if (await sessions.head("busy") === 0) await sessions.create({ session_id: "busy" });
  const started = now();
  await produce("busy", count);
  return now() - started;
}

/** Milliseconds from the first append until `subscribers` clients each received all `count` events. */
async function fanout(kind: "terret" | "raw", subscribers: number, count: number): Promise<number> {
  if (await sessions.head("busy") === 0) await sessions.create({ session_id: "busy" });
  const head = await sessions.head("busy");
  const urls = Array.from(
    { length: subscribers },
    (_, i) => kind === "terret" ? wsUrl(`watch-${i}`) : rawUrl("busy", "live"),
  );
  const run = job({
    urls,
    token: TOKEN,
    subscribe: kind === "terret" ? head + 1 : null,
    expect: urls.map(() => count),
  });
  await run.ready;
  if (kind === "terret") {
    while (terret.stats().subscribers < subscribers) await new Promise((r) => setTimeout(r, 1));
  } else {
    while ((rawSockets.get("busy")?.size ?? 0) < subscribers) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  const started = now();
  await produce("busy", count);
  const ended = await run.done;
  await settle();
  return ended - started;
}

/** Replay: milliseconds for a reconnecting client to read the whole `replay` session. */
async function replay(kind: "terret" | "raw"): Promise<number> {
  const total = await sessions.head("replay");
  const started = now();
  const run = job({
    urls: [kind === "terret" ? wsUrl("replay") : rawUrl("replay", "replay")],
    token: TOKEN,
    subscribe: kind === "terret" ? 1 : null,
    expect: [total],
  });
  const ended = await run.done;
  await settle();
  return ended - started;
}

/** Waits for every connection to be gone before the next round. */
async function settle(): Promise<void> {
  while (terret.stats().connections > 0 || [...rawSockets.values()].some((set) => set.size > 0)) {
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The slow-reader scenario: B's events per second, with A absent, reading, or stalled. */
async function slowReader(
  neighbour: "none" | "unobserved" | "reading" | "stalled",
  round: number,
): Promise<number> {
  const b = `b-${neighbour}-${round}`;
  const a = `a-${neighbour}-${round}`;
  await sessions.create({ session_id: b });
  await sessions.create({ session_id: a });
  const big = "z".repeat(64 * 1024);
  const aEvents = 300; // 19 MiB: past the kernel's buffers and the 8 MiB queue
  let stalled: Deno.TcpConn | undefined;
  if (neighbour === "stalled") {
    stalled = await Deno.connect({ hostname: "127.0.0.1", port: terret.port });
    await stalled.write(new TextEncoder().encode(
      `GET /v1/agents/${a}/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${btoa("bench-stalled-01")}\r\nSec-WebSocket-Version: 13\r\n` +
        `Authorization: Bearer ${TOKEN}\r\n\r\n`,
    ));
    // A masked subscribe frame, then never another read.
    const body = new TextEncoder().encode('{"type":"subscribe","from_seq":1}');
    const frame = new Uint8Array(6 + body.length);
    frame.set([0x81, 0x80 | body.length, 0, 0, 0, 0]);
    frame.set(body, 6);
    await stalled.write(frame);
  }
  const run = job({
    urls: [wsUrl(b), ...(neighbour === "reading" ? [wsUrl(a)] : [])],
    token: TOKEN,
    subscribe: 1,
    expect: [SLOW_EVENTS + 1, ...(neighbour === "reading" ? [aEvents + 1] : [])],
  });
  await run.ready;
  const subscribed = neighbour === "reading" || neighbour === "stalled" ? 2 : 1;
  while (terret.stats().subscribers < subscribed) await new Promise((r) => setTimeout(r, 1));
  const started = now();
  await Promise.all([
    produce(b, SLOW_EVENTS),
    neighbour === "none" ? Promise.resolve() : produce(a, aEvents, big, 1),
  ]);
  const ended = await run.done;
  stalled?.close();
  await settle();
  return SLOW_EVENTS / ((ended - started) / 1000);
}

await sessions.create({ session_id: "replay" });
await produce("replay", REPLAY - 1); // with session/created: 10,000 events

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
/** The median over rounds of `a[round] / b[round]`. */
const paired = (a: readonly number[], b: readonly number[]): number =>
  median(a.map((value, round) => value / b[round]!));
const fmt = (value: number): string => Math.round(value).toLocaleString("en-US").padStart(12);

console.log(
  `Deno ${Deno.version.deno}; events delivered per second, median of ${ROUNDS} rounds (order rotated per ` +
    "round); ratios are medians of per-round ratios\n",
);
console.log(
  `${"".padEnd(28)}${"terret".padStart(12)}${"raw floor".padStart(12)}   ratio (target >= 0.70)`,
);
for (
  const [label, subscribers, count] of [["1 subscriber", 1, FANOUT_ONE], [
    `${SUBSCRIBERS} subscribers`,
    SUBSCRIBERS,
    FANOUT_MANY,
  ]] as const
) {
  // Milliseconds per round: raw socket, Terret's socket, and the appends alone (nobody watching).
  const ms = { raw: [] as number[], terret: [] as number[], append: [] as number[] };
  const order = ["raw", "terret", "append"] as const;
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < order.length; k++) {
      const kind = order[(k + round) % order.length]!;
      ms[kind].push(
        kind === "append" ? await appendOnly(count) : await fanout(kind, subscribers, count),
      );
    }
  }
  const deliveries = count * subscribers;
  const rate = (values: number[]): number => deliveries / (median(values) / 1000);
  console.log(
    `${`fan-out to ${label}`.padEnd(28)}${fmt(rate(ms.terret))}${fmt(rate(ms.raw))}   ${
      paired(ms.raw, ms.terret).toFixed(2)
    }  (appends included)`,
  );
  // The socket alone: each round's time minus that round's append-only time.
  const socket = (values: number[]): number[] =>
    values.map((value, round) => Math.max(value - ms.append[round]!, 1e-3));
  const terretSocket = socket(ms.terret);
  const rawSocket = socket(ms.raw);
  console.log(
    `${"  socket only (minus appends)".padEnd(28)}${fmt(rate(terretSocket))}${
      fmt(rate(rawSocket))
    }   ${paired(rawSocket, terretSocket).toFixed(2)}  (appends alone: ${
      fmt(count / (median(ms.append) / 1000)).trim()
    } events/s)`,
  );
}
{
  const ours: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      floor.push(await replay("raw"));
      ours.push(await replay("terret"));
    } else {
      ours.push(await replay("terret"));
      floor.push(await replay("raw"));
    }
  }
  const rate = (values: number[]): number => REPLAY / (median(values) / 1000);
  console.log(
    `${`replay of ${REPLAY.toLocaleString("en-US")} events`.padEnd(28)}${fmt(rate(ours))}${
      fmt(rate(floor))
    }   ${paired(floor, ours).toFixed(2)}`,
  );
}

const slow: Record<string, number[]> = { none: [], unobserved: [], reading: [], stalled: [] };
const neighbours = ["none", "unobserved", "reading", "stalled"] as const;
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < neighbours.length; k++) {
    const neighbour = neighbours[(k + round) % neighbours.length]!;
    slow[neighbour]!.push(await slowReader(neighbour, round));
  }
}
console.log(
  `\nAgent B's events per second to its reader while agent A appends 300 chunks of 64 KiB (median of ${ROUNDS}; ` +
    "ratios: medians of per-round ratios):",
);
console.log(`  ${"A idle".padEnd(38)}${fmt(median(slow.none!))}`);
console.log(
  `  ${"A streaming, nobody watching A".padEnd(38)}${fmt(median(slow.unobserved!))}   1.00`,
);
for (
  const [neighbour, label] of [["reading", "A's reader keeping up"], [
    "stalled",
    "A's reader stalled (lagged)",
  ]] as const
) {
  const values = slow[neighbour]!;
  console.log(
    `  ${label.padEnd(38)}${fmt(median(values))}   ${paired(values, slow.unobserved!).toFixed(2)}`,
  );
}
console.log(`  connections dropped as lagged: ${terret.stats().lagged} (one per stalled round)`);

worker.terminate();
await terret.close();
await raw.shutdown();
await ctx.dispose();
await store.close();
