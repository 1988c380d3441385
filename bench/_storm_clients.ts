// deno-lint-ignore-file no-console
/**
 * The clients of `bench/replay_storm.ts`, in their own process so their work is not the server's: a storm of clients
 * that connect at once and subscribe from seq 1, or (a job with no storm agents) one caught-up live client, which
 * tails until its stdin closes. Reads a JSON job from argv, prints a JSON report on stdout.
 *
 * @module
 */
import { cpuUsage } from "node:process";

/** What the server asks for. */
export interface StormJob {
  readonly port: number;
  readonly token: string;
  /** The storm's agent ids; each has `events` stored events (none: the live client alone). */
  readonly agents: readonly string[];
  readonly events: number;
  /** The caught-up client's agent id (subscribed from its head + 1 before the storm), if any. */
  readonly live?: string;
  readonly liveFrom?: number;
  /** Subscribe from seq 1 once `hello` arrives (default); false measures the connection burst alone. */
  readonly subscribe?: boolean;
  /** Another tenant: while the storm runs, connect a fresh client to agent `probe-<n>` every 20 ms. */
  readonly probe?: boolean;
}

/** What the clients measured (milliseconds). */
export interface StormReport {
  /** Per storm client: connect to `hello`. */
  readonly hello: number[];
  /** Per storm client: connect to its last replayed event. */
  readonly caughtUp: number[];
  /** The storm's wall time: first connect to the last client caught up. */
  readonly wall: number;
  /** Live tail: append (epoch ms, the payload's text) to receipt, for events appended during the storm. */
  readonly live: number[];
  /** Per probe client (another tenant connecting during the storm): connect to `hello`. */
  readonly probe: number[];
  /** The clients' own CPU time (user + system) during the storm. */
  readonly cpu: number;
}

const job = JSON.parse(Deno.args[0]!) as StormJob;
const url = (agent: string): string => `ws://127.0.0.1:${job.port}/v1/agents/${agent}/stream`;
const protocols = ["terret.v1", `bearer.${job.token}`];

function open(agent: string): WebSocket {
  return new WebSocket(url(agent), protocols);
}

// The caught-up client.
const live: number[] = [];
let storming = false;
const liveSocket = job.live === undefined ? undefined : open(job.live);
await new Promise<void>((resolve, reject) => {
  if (liveSocket === undefined) return resolve();
  liveSocket.onmessage = (message) => {
    const frame = JSON.parse(message.data as string);
    if (frame.type === "hello") {
      liveSocket.send(JSON.stringify({ type: "subscribe", from_seq: job.liveFrom }));
      resolve();
    } else if (frame.type === "event" && storming) {
      live.push(Date.now() - Number(frame.event.payload.text));
    }
  };
  liveSocket.onerror = () => reject(new Error("the live client failed"));
});
console.error("ready");
const stdin = Deno.stdin.readable.getReader();
await stdin.read();

storming = true;
if (job.agents.length === 0) {
  // The caught-up client alone (its own process, as another orchestrator's would be): it tails until stdin closes.
  while (!(await stdin.read()).done) { /* the storm runs */ }
  storming = false;
  liveSocket?.close();
  console.log(
    JSON.stringify(
      { hello: [], caughtUp: [], wall: 0, live, probe: [], cpu: 0 } satisfies StormReport,
    ),
  );
  Deno.exit(0);
}
const cpuBefore = cpuUsage();
const start = performance.now();
const hello: number[] = [];
const caughtUp: number[] = [];
const probe: number[] = [];
const probing = job.probe === true ? probeUntilDone() : Promise.resolve();
await Promise.all(job.agents.map((agent) =>
  new Promise<void>((resolve, reject) => {
    const began = performance.now();
    const socket = open(agent);
    socket.onmessage = (message) => {
      const text = message.data as string;
      if (text.startsWith('{"type":"hello"')) {
        hello.push(performance.now() - began);
        if (job.subscribe === false) {
          caughtUp.push(performance.now() - began);
          socket.close();
          resolve();
          return;
        }
        socket.send(JSON.stringify({ type: "subscribe", from_seq: 1 }));
        return;
      }
      // The last event: its seq is the job's count (read without parsing every frame).
      if (text.includes(`,"seq":${job.events},"at"`)) {
        caughtUp.push(performance.now() - began);
        socket.close();
        resolve();
      }
    };
    socket.onclose = (event) => {
      if (caughtUp.length < job.agents.length && event.code !== 1000 && event.code !== 1005) {
        reject(new Error(`storm client ${agent} closed ${event.code} ${event.reason}`));
      }
    };
  })
));
const wall = performance.now() - start;
const used = cpuUsage(cpuBefore);
const cpu = (used.user + used.system) / 1000;
storming = false;
await probing;
liveSocket?.close();
console.log(JSON.stringify({ hello, caughtUp, wall, live, probe, cpu } satisfies StormReport));

/** Connects one probe client at a time, 20 ms apart, until the storm is over. */
async function probeUntilDone(): Promise<void> {
  for (let n = 0; storming; n++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!storming) return;
    const began = performance.now();
    const socket = open(`probe-${n}`);
    await new Promise<void>((resolve, reject) => {
      socket.onmessage = () => {
        probe.push(performance.now() - began);
        socket.close();
        resolve();
      };
      socket.onerror = () => reject(new Error(`probe ${n} failed`));
    });
  }
}
