// deno-lint-ignore-file no-console
/**
 * `trt serve` start-up on a Terret home whose SQLite store holds a long history, against the same start on an empty
 * home (the baseline: the same boot with nothing to sweep). At start the approvals row, the agents row (queued
 * input) and the jobs row (lost jobs) each list the sessions holding their types and read each by type; the
 * store's index of sparse types is what keeps that from costing every stored event. The history: `--sessions` sessions (default 1,000) of `--events`
 * events each (default 2,000), in turns of a message sent over the socket (its `input/queued`, then the claiming
 * `user/message`), a tool call and its result (4 KiB of output each 12 events), with no approvals, no jobs and
 * every queued message claimed, so every sweep finds nothing: the cost measured is the search.
 *
 * Each round starts `trt serve --home <home>` (sandbox-none, the socket on a free port) for each home, the order
 * rotated, and times it from spawn to the "running until" line. The first start on the history home is timed
 * apart: it creates the index when the store lacks it (a store written before the index existed). Prints medians
 * and the median of per-round ratios. After "running", each start is probed with `GET /healthz`, one request after
 * another for a second, while the queued-input recovery sweeps the history behind the socket: the longest wait
 * says how long a sweep held the event loop at once.
 *
 * Run: deno run -A bench/boot_sweeps.ts [--quick] [--sessions=N] [--events=N]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { type SessionEvent, SqliteSessionStore } from "@terret/core/sessions";

const quick = Deno.args.includes("--quick");
const arg = (name: string, fallback: number): number =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const SESSIONS = arg("sessions", quick ? 200 : 1000);
const EVENTS = arg("events", quick ? 1000 : 2000);
const ROUNDS = quick ? 3 : 7;
const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));
const TOKEN = "bench-token-0123456789abcdef";
/** How long after "running" the socket is probed with `/healthz`, in milliseconds. */
const HEALTH_WINDOW_MS = 1000;

const root = await Deno.makeTempDir({ prefix: "terret-bench-boot-" });
const patch = `${root}/patch.yml`;
await Deno.writeTextFile(
  patch,
  [
    "rows:",
    "  - id: sandbox",
    "    plugin: sandbox-none",
    "    config: { acknowledge_unsandboxed: true }",
    "  - id: interfaces.ws",
    "    config: { port: 0, token_env: TERRET_TOKEN }",
    "",
  ].join("\n"),
);

/** One session of `EVENTS` events in turns. */
function session(id: string): SessionEvent[] {
  const events: SessionEvent[] = [];
  const at = new Date(0).toISOString();
  const push = (type: string, payload: unknown): void => {
    events.push({
      id: crypto.randomUUID(),
      session_id: id,
      seq: events.length + 1,
      at,
      type,
      payload,
      parent_id: null,
    });
  };
  push("session/created", { meta: { agent_id: id } });
  for (let turn = 0; events.length < EVENTS - 12; turn++) {
    const call = `call_${turn}`;
    push("turn/start", { agent_id: id });
    push("step/start", { step: 1 });
    // A message over the socket: acknowledged durable first, then claimed by the turn's user/message.
    const content = `Turn ${turn}: go on with the work`;
    push("input/queued", { kind: "message", content, wake: true });
    push("user/message", { content, queued_seq: events.length });
    push("assistant/message", { parts: [{ type: "tool_call", id: call, name: "Read", args: {} }] });
    push("tool/call", { id: call, name: "Read", args: { file_path: "/work/src/main.ts" } });
    push("tool/result", { id: call, name: "Read", content: "x".repeat(4096), is_error: false });
    push("step/end", {
      step: 1,
      usage: { input_tokens: 10, output_tokens: 5 },
      finish_reason: "tool_calls",
    });
    push("step/start", { step: 2 });
    push("assistant/message", { parts: [{ type: "text", text: "Done." }] });
    push("step/end", {
      step: 2,
      usage: { input_tokens: 10, output_tokens: 5 },
      finish_reason: "stop",
    });
    push("turn/end", { status: "completed" });
  }
  return events;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** One start: milliseconds to "running", and how long `/healthz` requests waited in the window after it. */
interface Boot {
  readonly running: number;
  /** The longest wait. */
  readonly health: number;
  /** The median wait. */
  readonly healthMedian: number;
}

/**
 * Spawns `trt serve` on `home`, times it to its "running until" line, then sends `GET /healthz` requests one after
 * another for `HEALTH_WINDOW_MS` (the start-up recovery runs behind the socket meanwhile), keeping their waits.
 */
async function boot(home: string): Promise<Boot> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "serve", "--home", home, "--patch", patch],
    env: { TERRET_TOKEN: TOKEN, OPENROUTER_API_KEY: "sk-bench" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let seen = "";
  const watch = async (stream: ReadableStream<Uint8Array>): Promise<boolean> => {
    for await (const chunk of stream) {
      seen += decoder.decode(chunk, { stream: true });
      if (seen.includes("running until")) return true;
    }
    return false;
  };
  const running = await Promise.race([watch(child.stdout), watch(child.stderr)]);
  const elapsed = performance.now() - started;
  const waits: number[] = [];
  try {
    if (!running) throw new Error(`trt serve did not start on ${home}:\n${seen.slice(-2000)}`);
    const origin = /ws:\/\/([0-9.]+:[0-9]+)\//.exec(seen)?.[1];
    if (origin === undefined) throw new Error(`no socket address in:\n${seen}`);
    const until = performance.now() + HEALTH_WINDOW_MS;
    while (performance.now() < until) {
      const sent = performance.now();
      const response = await fetch(`http://${origin}/healthz`);
      await response.body?.cancel();
      if (!response.ok) throw new Error(`/healthz answered ${response.status}`);
      waits.push(performance.now() - sent);
    }
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // already ended
    }
    await child.status;
  }
  return { running: elapsed, health: Math.max(...waits), healthMedian: median(waits) };
}

try {
  const empty = `${root}/empty`;
  const history = `${root}/history`;
  await Deno.mkdir(empty);
  const path = `${history}/sessions/terret.db`;
  const store = SqliteSessionStore.open({ path });
  for (let i = 0; i < SESSIONS; i++) await store.importSession(session(`agent-${i}`));
  await store.close();
  // A store written before the index existed: the first start creates it.
  const raw = new DatabaseSync(path);
  raw.exec("DROP INDEX IF EXISTS session_events_sparse_v1");
  raw.close();
  await boot(empty); // warms the module cache
  const first = await boot(history);
  const times: Record<string, number[]> = { empty: [], history: [] };
  const health: Record<string, number[]> = { empty: [], history: [] };
  const healthMedian: Record<string, number[]> = { empty: [], history: [] };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["empty", "history"] : ["history", "empty"];
    const now: Record<string, number> = {};
    for (const name of order) {
      const result = await boot(name === "empty" ? empty : history);
      now[name] = result.running;
      times[name]!.push(result.running);
      health[name]!.push(result.health);
      healthMedian[name]!.push(result.healthMedian);
    }
    ratios.push(now.history! / now.empty!);
  }
  const events = (SESSIONS * EVENTS).toLocaleString("en-US");
  console.log(
    `trt serve to "running", ${ROUNDS} rounds (medians), history: ${SESSIONS} sessions, ${events} events`,
  );
  console.log(`  empty home (baseline)            ${median(times.empty!).toFixed(0)} ms`);
  console.log(
    `  history home                     ${median(times.history!).toFixed(0)} ms = ${
      median(ratios).toFixed(2)
    }x the empty home`,
  );
  console.log(
    `  history home, first start        ${first.running.toFixed(0)} ms (creates the sparse index)`,
  );
  console.log(
    `/healthz, one request after another for ${HEALTH_WINDOW_MS} ms after "running" (the recovery runs meanwhile), medians over rounds:`,
  );
  for (const name of ["empty", "history"]) {
    console.log(
      `  ${`${name} home`.padEnd(32)} longest wait ${
        median(health[name]!).toFixed(1)
      } ms, median wait ${median(healthMedian[name]!).toFixed(2)} ms`,
    );
  }
} finally {
  await Deno.remove(root, { recursive: true });
}
