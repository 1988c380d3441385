// deno-lint-ignore-file no-console
/**
 * Reconnect storm: 200 agents × 1,000 stored events (about 800 bytes each) in a real SQLite file, served by the real
 * socket server over real sockets; every client reconnects at once and subscribes from seq 1, while one caught-up
 * client tails an agent that appends every 10 ms. The storm's clients run in a process of their own
 * (`bench/_storm_clients.ts`), and the caught-up client in another (as another orchestrator's would: in the storm's
 * process its frames would wait behind the storm clients' own).
 *
 * Reported against the issue's targets: every client caught up (wall); `hello` p99 twice: of another tenant that
 * connects every 20 ms while the storm runs (the live path waiting behind replay), and of the 200 storm clients
 * themselves, which connect at the same instant (beside the same burst with no replay at all: the handshakes alone,
 * and the same burst against a bare server that only upgrades and says hello: the machine's floor for the burst);
 * the live tail's p99; the peak RSS against the quiet server plus the replay budget; and one connection's replay
 * throughput against the floor. The floor is a bare `Deno.serve` socket that reads the same rows raw and
 * `socket.send`s the same bytes with no scheduling and no flow control: one connection's replay (median of paired
 * rounds, order rotated), and the whole storm served by it after Terret's (so its unbounded queues stay out of
 * Terret's peak RSS). Both processes' CPU time is printed beside the wall times: on a shared, loaded machine the
 * wall figures include waiting for a core, and the 2-core machine runs the server and the clients at once.
 *
 * Run: deno run -A bench/replay_storm.ts [--quick] [--agents N] [--events N] [--rounds N] [--cpu-prof FILE]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { cpuUsage } from "node:process";
import { Session } from "node:inspector";
import { createContext } from "@terret/hames";
import { type SessionEvent, SessionLog } from "@terret/core";
import { SqliteSessionStore } from "@terret/core/sessions";
import { type AgentGateway, wsConfig, WsServer } from "@terret/ws";
import type { StormJob, StormReport } from "./_storm_clients.ts";

const quick = Deno.args.includes("--quick");
const arg = (name: string, fallback: number): number => {
  const index = Deno.args.indexOf(name);
  return index < 0 ? fallback : Number(Deno.args[index + 1]);
};
const AGENTS = arg("--agents", quick ? 50 : 200);
const EVENTS = arg("--events", 1000);
const ROUNDS = arg("--rounds", quick ? 3 : 7);
/** `--cpu-prof FILE`: a V8 CPU profile of the server during the storm (open it in Chrome's devtools). */
const profileArg = Deno.args.includes("--cpu-prof")
  ? Deno.args[Deno.args.indexOf("--cpu-prof") + 1]
  : undefined;
const TOKEN = "bench-token-0123456789abcdef";
const TEXT = "storm ".repeat(110); // ~660 characters of text: ~800-byte events

const dir = await Deno.makeTempDir({ prefix: "terret-storm-" });
const path = `${dir}/sessions.db`;
const store = SqliteSessionStore.open({ path });
const at = new Date(0).toISOString();
const envelope = (session: string, seq: number): SessionEvent => ({
  id: crypto.randomUUID(),
  session_id: session,
  seq,
  at,
  type: seq === 1 ? "session/created" : "assistant/chunk",
  payload: seq === 1 ? { meta: { agent_id: session } } : { kind: "text", text: `${seq} ${TEXT}` },
  parent_id: null,
});
const agents = Array.from({ length: AGENTS }, (_, i) => `storm-${i}`);
for (const agent of agents) {
  await store.importSession(Array.from({ length: EVENTS }, (_, i) => envelope(agent, i + 1)));
}
await store.importSession([
  envelope("solo", 1),
  ...Array.from({ length: EVENTS - 1 }, (_, i) => envelope("solo", i + 2)),
]);
const ctx = createContext({ mode: "production" });
const sessions = new SessionLog(ctx, store);
await sessions.create({ session_id: "live" });
const gateway: AgentGateway = {
  open(agentId) {
    return Promise.resolve({
      agentId,
      sessionId: agentId,
      ready: () => Promise.resolve(),
      message: () => Promise.resolve(),
      steer: () => Promise.resolve(),
      cancel: () => Promise.resolve(),
      dispose: () => Promise.resolve(),
    });
  },
  state: () => ({ status: "idle", resident: false }),
  figures: () => ({ resident: 0, busy: 0, max: 128 }),
};
const BUDGET = 64 * 1024 * 1024;
const base = { port: 0, tokens: [{ token: TOKEN, agents: ["*"] }] };
let budgeted = true;
let config;
try {
  config = wsConfig.parse({ ...base, replay_budget_bytes: BUDGET });
} catch {
  budgeted = false; // a build without the replay budget (the "before" figures)
  config = wsConfig.parse(base);
}
const server = await WsServer.start({ ctx, sessions, agents: gateway, config });

// The floor: a bare `Deno.serve` socket that says hello, then on the first frame sends every stored row of the agent
// named in the path, framed as Terret frames them, with no scheduling, no flow control and no budget.
const floor = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
  const session = new URL(request.url).pathname.split("/")[3]!;
  const { socket, response } = Deno.upgradeWebSocket(
    request,
    request.headers.has("sec-websocket-protocol") ? { protocol: "terret.v1" } : {},
  );
  const db = new DatabaseSync(path, { readOnly: true });
  const rows = db.prepare(
    "SELECT seq, id, at, type, parent_id, payload FROM session_events WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
  );
  (rows as unknown as { setReturnArrays(enabled: boolean): void }).setReturnArrays(true);
  const quoted = JSON.stringify(session);
  socket.onopen = () => socket.send(`{"type":"hello","session_id":${quoted}}`);
  socket.onmessage = () => {
    let next = 1;
    for (;;) {
      const page = rows.all(session, next, 1000) as unknown as [
        number,
        string,
        string,
        string,
        null,
        string,
      ][];
      for (const r of page) {
        socket.send(
          `{"type":"event","event":{"id":${JSON.stringify(r[1])},"session_id":${quoted},"seq":${
            r[0]
          },"at":${JSON.stringify(r[2])},"type":${JSON.stringify(r[3])},"payload":${
            r[5]
          },"parent_id":null}}`,
        );
      }
      if (page.length < 1000) break;
      next = page.at(-1)![0] + 1;
    }
  };
  socket.onclose = () => db.close();
  return response;
});

// The handshake floor: a bare `Deno.serve` socket that upgrades and says hello, nothing else (no token check, no
// store): what a burst of connections costs this machine's server and clients before any Terret work.
const bare = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
  const session = new URL(request.url).pathname.split("/")[3]!;
  const { socket, response } = Deno.upgradeWebSocket(request, { protocol: "terret.v1" });
  socket.onopen = () => socket.send(`{"type":"hello","session_id":${JSON.stringify(session)}}`);
  return response;
});

async function replayOnce(kind: "terret" | "floor"): Promise<number> {
  const port = kind === "terret" ? server.port : floor.addr.port;
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/agents/solo/stream`, [
    "terret.v1",
    `bearer.${TOKEN}`,
  ]);
  const began = performance.now();
  const last = `"seq":${EVENTS},"at"`;
  return await new Promise<number>((resolve, reject) => {
    socket.onmessage = (message) => {
      const text = message.data as string;
      if (text.startsWith('{"type":"hello"')) {
        socket.send(JSON.stringify({ type: "subscribe", from_seq: 1 }));
      } else if (text.includes(last)) {
        resolve(performance.now() - began);
        socket.close();
      }
    };
    socket.onerror = () => reject(new Error(`the ${kind} replay failed`));
  });
}
const ratios: number[] = [];
const terretMs: number[] = [];
const floorMs: number[] = [];
for (let round = 0; round < ROUNDS + 1; round++) {
  const order = round % 2 === 0 ? ["terret", "floor"] : ["floor", "terret"];
  const times: Record<string, number> = {};
  for (const which of order) {
    times[which] = await replayOnce(which as "terret" | "floor");
  }
  if (round === 0) continue; // warm-up
  terretMs.push(times.terret!);
  floorMs.push(times.floor!);
  ratios.push(times.floor! / times.terret!);
}

// The storm, against Terret, then against the floor (after, so the floor's unbounded queues do not count in
// Terret's peak RSS).
const quiet = Deno.memoryUsage().rss;
let peak = quiet;
const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
let appending = true;
const appender = (async () => {
  while (appending) {
    await sessions.append("live", {
      type: "assistant/chunk",
      payload: { kind: "text", text: `${Date.now()}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
})();
const profiler = profileArg === undefined ? undefined : await startProfile();
const storm = await stormOnce(server.port, { live: "live", probe: true });
if (profiler !== undefined) await profiler.stop(profileArg!);
appending = false;
await appender;
clearInterval(sampler);
peak = Math.max(peak, Deno.memoryUsage().rss);
const floorStorm = await stormOnce(floor.addr.port, { probe: true });
// The same connection burst with no replay: what the handshakes alone cost the burst's `hello`.
const burst = await stormOnce(server.port, { subscribe: false });
const bareBurst = await stormOnce(bare.addr.port, { subscribe: false });
const report = storm.report;

/** A clients process (`bench/_storm_clients.ts`) that said it is ready, with a way to start it and read its report. */
interface Clients {
  go(): Promise<void>;
  stop(): Promise<void>;
  report(): Promise<StormReport>;
}

async function clients(job: StormJob): Promise<Clients> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      fileURLToPath(new URL("./_storm_clients.ts", import.meta.url)),
      JSON.stringify(job),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errors = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("ready")) {
    const { value, done } = await errors.read();
    if (done) throw new Error(`the storm clients exited: ${said}`);
    said += value;
  }
  const writer = child.stdin.getWriter();
  return {
    go: () => writer.write(new TextEncoder().encode("go\n")),
    stop: () => writer.close(),
    async report() {
      const output = await new Response(child.stdout).text();
      const status = await child.status;
      await errors.cancel();
      if (!status.success) throw new Error(`the storm clients failed: ${said}`);
      return JSON.parse(output) as StormReport;
    },
  };
}

/**
 * Runs the storm clients against `port` (and the caught-up live client in a process of its own, when asked); the
 * server's CPU time is measured across the storm.
 */
async function stormOnce(
  port: number,
  options: { live?: string; probe?: boolean; subscribe?: boolean },
): Promise<{ report: StormReport; cpu: number }> {
  const base = { port, token: TOKEN, events: EVENTS };
  const tail = options.live === undefined
    ? undefined
    : await clients({ ...base, agents: [], live: options.live, liveFrom: 2 });
  const storm = await clients({
    ...base,
    agents,
    probe: options.probe === true,
    subscribe: options.subscribe !== false,
  });
  const cpuBefore = cpuUsage();
  await tail?.go();
  await storm.go();
  await storm.stop();
  const report = await storm.report();
  const used = cpuUsage(cpuBefore);
  await tail?.stop();
  const live = (await tail?.report())?.live ?? [];
  return { report: { ...report, live }, cpu: (used.user + used.system) / 1000 };
}

async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => error ? reject(error) : resolve(result))
    );
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 100 });
  await post("Profiler.start");
  return {
    async stop(file) {
      const { profile } = await post("Profiler.stop") as { profile: unknown };
      await Deno.writeTextFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

const MiB = 1024 * 1024;
const p = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const median = (values: readonly number[]): number => p(values, 0.5);
const budget = budgeted ? BUDGET : 0;
const rows: [string, string, string][] = [
  [
    `all ${AGENTS} clients caught up (wall)`,
    `${report.wall.toFixed(0)} ms (floor ${floorStorm.report.wall.toFixed(0)} ms, ${
      (floorStorm.report.wall / report.wall).toFixed(2)
    }×)`,
    "≤ 1500 ms",
  ],
  [
    `hello p99 of another tenant connecting during the storm (${report.probe.length} probes)`,
    `${p(report.probe, 0.99).toFixed(1)} ms (floor ${
      p(floorStorm.report.probe, 0.99).toFixed(1)
    } ms)`,
    "≤ 50 ms",
  ],
  [
    `hello p99 of the ${AGENTS} storm clients connecting at once`,
    `${p(report.hello, 0.99).toFixed(1)} ms (no replay ${
      p(burst.report.hello, 0.99).toFixed(1)
    } ms; bare server ${p(bareBurst.report.hello, 0.99).toFixed(1)} ms)`,
    "≤ 50 ms",
  ],
  [
    `live tail p99 during the storm (${report.live.length} events)`,
    `${p(report.live, 0.99).toFixed(1)} ms`,
    "≤ 50 ms",
  ],
  [
    "peak RSS / (quiet + budget)",
    `${(peak / MiB).toFixed(0)} MiB / (${(quiet / MiB).toFixed(0)} + ${budget / MiB}) MiB = ${
      (peak / (quiet + budget)).toFixed(2)
    }`,
    "≤ 1.2",
  ],
  [
    "one connection's replay: floor / terret (median of paired rounds)",
    `${median(ratios).toFixed(2)} (terret ${median(terretMs).toFixed(1)} ms, floor ${
      median(floorMs).toFixed(1)
    } ms)`,
    "≥ 0.8",
  ],
];
console.log(
  `reconnect storm: ${AGENTS} agents × ${EVENTS} events (${
    (Deno.statSync(path).size / MiB).toFixed(0)
  } MiB SQLite), budget ${budgeted ? `${BUDGET / MiB} MiB` : "none (this build has none)"}`,
);
for (const [name, value, target] of rows) {
  console.log(`  ${name.padEnd(68)} ${value.padEnd(44)} target ${target}`);
}
console.log(
  `  CPU during the storm: server ${storm.cpu.toFixed(0)} ms (floor ${
    floorStorm.cpu.toFixed(0)
  } ms), clients ${report.cpu.toFixed(0)} ms (floor ${floorStorm.report.cpu.toFixed(0)} ms); ` +
    "on a shared machine the wall figures include waiting for a core",
);
console.log(
  `  hello p50: storm clients ${median(report.hello).toFixed(1)} ms (no replay ${
    median(burst.report.hello).toFixed(1)
  } ms, bare server ${median(bareBurst.report.hello).toFixed(1)} ms), probes ${
    median(report.probe).toFixed(1)
  } ms; caught-up p50 ${median(report.caughtUp).toFixed(0)} ms; load average ${
    Deno.loadavg()[0]!.toFixed(2)
  }`,
);

await server.close();
await floor.shutdown();
await bare.shutdown();
await ctx.dispose();
await store.close();
await Deno.remove(dir, { recursive: true });
