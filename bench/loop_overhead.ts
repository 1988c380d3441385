// deno-lint-ignore-file no-console
/**
 * The loop's harness overhead, against one instant fake OpenRouter server (its own process), for three harnesses
 * running the same 3-step tool turn (tool call, tool call, text answer; system prompt, one user message, one tool):
 *
 * - `terret`: the composed core rows (SQLite store, every event durable; sessions; the OpenRouter adapter; tools and
 *   the allow list; prompt; agents; the default loop) in production mode, one fresh agent per turn;
 * - `pi`: `@earendil-works/pi-agent-core`'s `Agent` over `@earendil-works/pi-ai`'s OpenAI-compatible
 *   (`openai-completions`) API pointed at the same server, one fresh agent per turn;
 * - `fetch`: a hand-written loop (fetch, SSE split, `JSON.parse`, tool call, next request): the floor.
 * - `durable` (latency only): the floor plus the least that Terret's guarantees cost, written by hand: the request
 *   abortable, the body read as a stream (so chunks could be logged as they arrive), and the turn's 18 events
 *   written to SQLite (`node:sqlite`, WAL, Terret's schema, a head read and the inserts in each transaction) in the
 *   six transactions the ordering needs: `turn/start`, `step/start`, `user/message` before the first request;
 *   `assistant/message`, `tool/call` before the tool runs; `tool/result`, `step/end`, `step/start` before the next
 *   request; the chunk, `assistant/message`, `step/end`, `turn/end` at the end. No validation, history, invariant,
 *   tools pipeline, prompt or events: a bound no harness with those guarantees can go below.
 *
 * Latency runs in rounds (each harness once per round, the order rotated); the figures are medians over rounds
 * and the ratios medians of per-round ratios, which the load of other processes on a shared machine moves least.
 * Per-step overhead is a turn's wall time (from handing the agent its message to the turn's end; making the fresh
 * agent and its session is not timed) minus the server's own time for that turn's three requests (the server
 * reports it at `/stats`), divided by 3; median and p99 over 200 sequential turns after a warm-up. Memory is the
 * peak RSS above the baseline (after set-up and warm-up, after a full GC) while N agents each run one 3-step turn at
 * once, divided by N, for N = 100 and 500. Each harness and each measurement runs in a fresh process.
 *
 * Run: deno run -A bench/loop_overhead.ts [--quick]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";

const SELF = fileURLToPath(import.meta.url);
const SYSTEM = "You do the work you are asked, with the work tool.";
const PROMPT = "Do the work";
const TOOL_PARAMETERS = {
  type: "object",
  properties: { step: { type: "number" } },
  required: ["step"],
};

/** Turns measured per harness (after the warm-up). */
const TURNS = Deno.args.includes("--quick") ? 60 : 200;
const WARM = Deno.args.includes("--quick") ? 60 : 300;
const SIZES = [100, 500];
/** Latency rounds: each runs every harness once (order rotated); figures are medians over rounds. */
const ROUNDS = Deno.args.includes("--quick") ? 1 : 3;

type Harness = "terret" | "pi" | "fetch" | "durable";
/** The harnesses compared (latency and memory). */
const HARNESSES: readonly Harness[] = ["fetch", "pi", "terret"];
/** The harnesses timed (latency only for the durable floor). */
const TIMED: readonly Harness[] = ["fetch", "durable", "pi", "terret"];

interface LatencyResult {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly server_ms_per_request: number;
}

interface MemoryResult {
  readonly agents: number;
  readonly rss_kib_per_agent: number;
  readonly heap_kib_per_agent: number;
  readonly wall_ms: number;
}

// ---------------------------------------------------------------------------------------------------------------
// The fake server (its own process): answers by the number of tool results in the request, and keeps the time its
// handler spent.

function serve(): void {
  const bodies = [
    new TextEncoder().encode(
      sseResponse(
        toolCallTurn([{ id: "call_1", name: "work", args: { step: 1 }, fragments: 1 }], {
          keepalive: false,
        }),
      ).body as string,
    ),
    new TextEncoder().encode(
      sseResponse(
        toolCallTurn([{ id: "call_2", name: "work", args: { step: 2 }, fragments: 1 }], {
          keepalive: false,
        }),
      ).body as string,
    ),
    new TextEncoder().encode(
      sseResponse(textTurn("All done.", { keepalive: false })).body as string,
    ),
  ];
  let requests = 0;
  let serverMs = 0;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(port),
  }, async (request) => {
    const started = performance.now();
    if (request.method === "GET") {
      return Response.json({ requests, server_ms: serverMs });
    }
    const body = await request.json() as { messages: { role: string }[] };
    let tools = 0;
    for (const message of body.messages) if (message.role === "tool") tools++;
    const response = new Response(bodies[Math.min(tools, 2)], {
      headers: { "content-type": "text/event-stream" },
    });
    requests++;
    serverMs += performance.now() - started;
    return response;
  });
  Deno.addSignalListener("SIGTERM", () => void server.shutdown());
}

// ---------------------------------------------------------------------------------------------------------------
// The harnesses: each returns a function running one 3-step turn.

/** Prepares turn `index` (untimed: a fresh agent) and returns the function running it (timed). */
type TurnRunner = (index: number) => Promise<() => Promise<void>>;

async function terret(baseUrl: string, dir: string, maxAgents: number): Promise<TurnRunner> {
  const { createContext, createMemoryLogger, Loader } = await import("@terret/hames");
  const core = await import("@terret/core");
  const ctx = createContext({ mode: "production", logger: createMemoryLogger() });
  await new Loader(ctx).load([
    { id: "sessions.store", plugin: core.sqliteStorePlugin, config: { path: `${dir}/bench.db` } },
    { id: "sessions", plugin: core.sessionsPlugin, config: {} },
    { id: "llm", plugin: core.LlmRegistry, config: {} },
    {
      id: "llm.main",
      plugin: core.openRouterLlm,
      config: { model: "test/model", base_url: baseUrl, api_key: "sk-bench", max_retries: 0 },
    },
    { id: "tools", plugin: core.ToolRegistry, config: {} },
    { id: "tools.allow", plugin: core.ToolAllowList, config: { allow: ["work"] } },
    { id: "prompt", plugin: core.PromptAssembler, config: {} },
    { id: "agents", plugin: core.AgentRegistry, config: { max_agents: maxAgents } },
    { id: "loop", plugin: core.AgentLoop, config: {} },
  ]);
  ctx.get(core.ToolsKey).register(ctx, {
    name: "work",
    description: "Does one step of the work",
    parameters: TOOL_PARAMETERS,
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    handler: (args) => `step ${(args as { step: number }).step} done`,
  });
  const agents = ctx.get(core.AgentsKey);
  return async (index) => {
    const agent = await agents.create({ agent_id: `bench-${index}`, meta: { persona: SYSTEM } });
    return async () => {
      agent.send(PROMPT);
      await agent.idle();
      if (agent.status !== "idle") throw new Error(`terret: turn ${index} ended ${agent.status}`);
    };
  };
}

async function pi(baseUrl: string): Promise<TurnRunner> {
  const { Agent } = await import("npm:@earendil-works/pi-agent-core@1.6.0");
  const { createModels, createProvider } = await import("npm:@earendil-works/pi-ai@1.6.0");
  const { openAICompletionsApi } = await import(
    "npm:@earendil-works/pi-ai@1.6.0/api/openai-completions.lazy"
  );
  const model = {
    id: "test/model",
    name: "Test model",
    api: "openai-completions",
    provider: "fake",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 4096,
  };
  const models = createModels();
  models.setProvider(createProvider({
    id: "fake",
    name: "Fake",
    baseUrl,
    auth: {
      apiKey: { name: "Fake", resolve: () => Promise.resolve({ auth: { apiKey: "sk-bench" } }) },
    },
    models: [model],
    api: openAICompletionsApi(),
  } as never));
  const resolved = models.getModel("fake", "test/model")!;
  const tool = {
    name: "work",
    label: "Work",
    description: "Does one step of the work",
    parameters: TOOL_PARAMETERS,
    execute: (_id: string, params: { step: number }) =>
      Promise.resolve({
        content: [{ type: "text", text: `step ${params.step} done` }],
        details: undefined,
      }),
  };
  return (index) => {
    const agent = new Agent({
      initialState: { systemPrompt: SYSTEM, model: resolved, tools: [tool as never] },
      streamFn: models.streamSimple.bind(models),
    });
    return Promise.resolve(async () => {
      await agent.prompt(PROMPT);
      const last = agent.state.messages.at(-1) as { stopReason?: string } | undefined;
      if (last?.stopReason !== "stop") {
        throw new Error(`pi: turn ${index} ended ${last?.stopReason}`);
      }
    });
  };
}

/** A model reply as the hand-written floors assemble it. */
interface Reply {
  content: string;
  readonly calls: { id: string; name: string; args: string }[];
}

/** Folds one SSE data payload into the reply: the floors' whole decoder (text, tool calls by index). */
function fold(data: string, reply: Reply): void {
  const chunk = JSON.parse(data) as {
    choices: { delta: { content?: string; tool_calls?: Record<string, unknown>[] } }[];
  };
  const delta = chunk.choices[0]?.delta;
  if (delta?.content) reply.content += delta.content;
  for (const call of delta?.tool_calls ?? []) {
    const at = call.index as number;
    const fn = call.function as { name?: string; arguments?: string };
    reply.calls[at] ??= { id: call.id as string, name: fn.name ?? "", args: "" };
    reply.calls[at].args += fn.arguments ?? "";
  }
}

/** The assistant message of a reply that called tools, as a floor sends it back. */
function toolCallMessage(calls: Reply["calls"]): Record<string, unknown> {
  return {
    role: "assistant",
    content: null,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.args },
    })),
  };
}

function fetchLoop(baseUrl: string): TurnRunner {
  const url = `${baseUrl}/chat/completions`;
  const tools = [{
    type: "function",
    function: {
      name: "work",
      description: "Does one step of the work",
      parameters: TOOL_PARAMETERS,
    },
  }];
  return (index) =>
    Promise.resolve(async () => {
      const messages: Record<string, unknown>[] = [
        { role: "system", content: SYSTEM },
        { role: "user", content: PROMPT },
      ];
      for (;;) {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
          body: JSON.stringify({ model: "test/model", messages, tools, stream: true }),
        });
        const text = await response.text();
        const reply: Reply = { content: "", calls: [] };
        for (const event of text.split("\n\n")) {
          if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
          fold(event.slice(6), reply);
        }
        const { content, calls } = reply;
        if (calls.length === 0) {
          messages.push({ role: "assistant", content });
          if (content !== "All done.") throw new Error(`fetch: turn ${index} answered ${content}`);
          return;
        }
        messages.push(toolCallMessage(calls));
        for (const call of calls) {
          const args = JSON.parse(call.args) as { step: number };
          messages.push({ role: "tool", tool_call_id: call.id, content: `step ${args.step} done` });
        }
      }
    });
}

/** The SQLite writes of the durable floor: Terret's schema and pragmas, one transaction per group. */
class DurableLog {
  readonly #db: import("node:sqlite").DatabaseSync;
  readonly #begin: import("node:sqlite").StatementSync;
  readonly #commit: import("node:sqlite").StatementSync;
  readonly #head: import("node:sqlite").StatementSync;
  readonly #insert: import("node:sqlite").StatementSync;

  constructor(db: import("node:sqlite").DatabaseSync) {
    this.#db = db;
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA wal_autocheckpoint = 10000");
    db.exec(
      "CREATE TABLE IF NOT EXISTS session_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, " +
        "id TEXT NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, parent_id TEXT, payload TEXT NOT NULL, " +
        "UNIQUE (session_id, seq))",
    );
    this.#begin = db.prepare("BEGIN IMMEDIATE");
    this.#commit = db.prepare("COMMIT");
    this.#head = db.prepare("SELECT max(seq) AS head FROM session_events WHERE session_id = ?");
    this.#insert = db.prepare(
      "INSERT INTO session_events (session_id, seq, id, at, type, parent_id, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
  }

  /** Writes `events` to `session` in one transaction, after its head. */
  write(session: string, events: readonly (readonly [string, unknown])[]): void {
    this.#begin.run();
    try {
      let seq = (this.#head.get(session) as { head: number | null }).head ?? 0;
      const at = new Date().toISOString();
      for (const [type, payload] of events) {
        this.#insert.run(
          session,
          ++seq,
          crypto.randomUUID(),
          at,
          type,
          null,
          JSON.stringify(payload),
        );
      }
      this.#commit.run();
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }
}

async function durableLoop(baseUrl: string, dir: string): Promise<TurnRunner> {
  const { DatabaseSync } = await import("node:sqlite");
  const log = new DurableLog(new DatabaseSync(`${dir}/durable.db`));
  const url = `${baseUrl}/chat/completions`;
  const tools = [{
    type: "function",
    function: {
      name: "work",
      description: "Does one step of the work",
      parameters: TOOL_PARAMETERS,
    },
  }];
  const decoder = new TextDecoder();
  return (index) => {
    const session = `durable-${index}`;
    log.write(session, [["session/created", { meta: { persona: SYSTEM } }]]);
    return Promise.resolve(async () => {
      const messages: Record<string, unknown>[] = [
        { role: "system", content: SYSTEM },
        { role: "user", content: PROMPT },
      ];
      const pending: [string, unknown][] = [
        ["turn/start", { agent_id: session }],
        ["step/start", { step: 1 }],
        ["user/message", { content: PROMPT }],
      ];
      for (let step = 1;; step++) {
        log.write(session, pending.splice(0));
        const controller = new AbortController();
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
          body: JSON.stringify({ model: "test/model", messages, tools, stream: true }),
          signal: controller.signal,
        });
        const reader = response.body!.getReader();
        let buffered = "";
        const reply: Reply = { content: "", calls: [] };
        let done = false;
        while (!done) {
          const read = await reader.read();
          if (read.done) break;
          buffered += decoder.decode(read.value, { stream: true });
          let end = buffered.indexOf("\n\n");
          while (end !== -1) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            end = buffered.indexOf("\n\n");
            if (event === "data: [DONE]") done = true;
            if (!event.startsWith("data: ") || done) continue;
            fold(event.slice(6), reply);
          }
        }
        reader.cancel().catch(() => {});
        const { content, calls } = reply;
        const usage = { input_tokens: 10, output_tokens: 5 };
        if (calls.length === 0) {
          messages.push({ role: "assistant", content });
          log.write(session, [
            ["assistant/chunk", { kind: "text", text: content }],
            ["assistant/message", { parts: [{ type: "text", text: content }] }],
            ["step/end", { step, usage, finish_reason: "stop" }],
            ["turn/end", { status: "completed" }],
          ]);
          if (content !== "All done.") {
            throw new Error(`durable: turn ${index} answered ${content}`);
          }
          return;
        }
        const parsed = calls.map((call) => ({
          ...call,
          parsed: JSON.parse(call.args) as { step: number },
        }));
        log.write(session, [
          ["assistant/message", {
            parts: parsed.map((call) => ({
              type: "tool_call",
              id: call.id,
              name: call.name,
              args: call.parsed,
            })),
          }],
          ...parsed.map((call): [string, unknown] => [
            "tool/call",
            { id: call.id, name: call.name, args: call.parsed },
          ]),
        ]);
        messages.push(toolCallMessage(calls));
        for (const call of parsed) {
          const result = `step ${call.parsed.step} done`;
          messages.push({ role: "tool", tool_call_id: call.id, content: result });
          pending.push([
            "tool/result",
            { id: call.id, name: call.name, content: result, is_error: false },
          ]);
        }
        pending.push(["step/end", { step, usage, finish_reason: "tool_calls" }]);
        pending.push(["step/start", { step: step + 1 }]);
      }
    });
  };
}

async function harness(
  name: Harness,
  baseUrl: string,
  dir: string,
  agents: number,
): Promise<TurnRunner> {
  if (name === "terret") return await terret(baseUrl, dir, Math.max(agents, TURNS + WARM) + 10);
  if (name === "pi") return await pi(baseUrl);
  if (name === "durable") return await durableLoop(baseUrl, dir);
  return fetchLoop(baseUrl);
}

// ---------------------------------------------------------------------------------------------------------------
// The worker (one process per harness and measurement).

async function serverStats(baseUrl: string): Promise<{ requests: number; server_ms: number }> {
  return await (await fetch(`${baseUrl}/stats`)).json();
}

async function latency(name: Harness, baseUrl: string, dir: string): Promise<LatencyResult> {
  const turn = await harness(name, baseUrl, dir, 0);
  for (let i = 0; i < WARM; i++) await (await turn(i))();
  const perStep: number[] = [];
  let server = 0;
  for (let i = WARM; i < WARM + TURNS; i++) {
    const run = await turn(i);
    const before = await serverStats(baseUrl);
    const started = performance.now();
    await run();
    const wall = performance.now() - started;
    const after = await serverStats(baseUrl);
    if (after.requests - before.requests !== 3) {
      throw new Error(`${name}: a turn made other than 3 requests`);
    }
    server += after.server_ms - before.server_ms;
    perStep.push((wall - (after.server_ms - before.server_ms)) / 3);
  }
  perStep.sort((a, b) => a - b);
  const at = (q: number) => perStep[Math.min(perStep.length - 1, Math.floor(q * perStep.length))]!;
  return {
    p50: at(0.5),
    p99: at(0.99),
    mean: perStep.reduce((sum, value) => sum + value, 0) / perStep.length,
    server_ms_per_request: server / (TURNS * 3),
  };
}

async function memory(
  name: Harness,
  baseUrl: string,
  dir: string,
  agents: number,
): Promise<MemoryResult> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run the worker with --v8-flags=--expose-gc");
  const turn = await harness(name, baseUrl, dir, agents + 10);
  for (let i = 0; i < 5; i++) await (await turn(i))();
  gc();
  const base = Deno.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sample = (): void => {
    const now = Deno.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  };
  const timer = setInterval(sample, 1);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: agents }, (_, i) => turn(10 + i).then((run) => run()).then(sample)),
  );
  const wall = performance.now() - started;
  clearInterval(timer);
  sample();
  return {
    agents,
    rss_kib_per_agent: (peakRss - base.rss) / agents / 1024,
    heap_kib_per_agent: (peakHeap - base.heapUsed) / agents / 1024,
    wall_ms: wall,
  };
}

async function worker(args: readonly string[]): Promise<void> {
  const [, name, baseUrl, what] = args as [string, Harness, string, string];
  const dir = await Deno.makeTempDir({ prefix: "terret-bench-" });
  try {
    const result = what === "latency"
      ? await latency(name, baseUrl, dir)
      : await memory(name, baseUrl, dir, Number(what));
    console.log(JSON.stringify(result));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  Deno.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The orchestrator.

async function run(args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", SELF, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`worker ${args.join(" ")} failed`);
  return new TextDecoder().decode(output.stdout).trim().split("\n").at(-1)!;
}

async function main(): Promise<void> {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SELF, "--server"],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let first = "";
  while (!first.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fake server did not start");
    first += value;
  }
  const baseUrl = `http://127.0.0.1:${first.trim()}/api/v1`;
  try {
    const rounds: Map<Harness, LatencyResult>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = new Map<Harness, LatencyResult>();
      for (let i = 0; i < TIMED.length; i++) {
        const name = TIMED[(i + round) % TIMED.length]!;
        results.set(name, JSON.parse(await run(["--worker", name, baseUrl, "latency"])));
      }
      rounds.push(results);
    }
    const memories = new Map<string, MemoryResult>();
    for (const name of HARNESSES) {
      for (const size of SIZES) {
        memories.set(
          `${name}@${size}`,
          JSON.parse(await run(["--worker", name, baseUrl, String(size)])),
        );
      }
    }
    report(rounds, memories);
  } finally {
    server.kill("SIGTERM");
    await reader.cancel();
    await server.status;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function report(
  rounds: readonly Map<Harness, LatencyResult>[],
  memories: Map<string, MemoryResult>,
): void {
  const latencies = new Map<Harness, LatencyResult>(TIMED.map((name) => {
    const of = (key: keyof LatencyResult) => median(rounds.map((round) => round.get(name)![key]));
    return [name, {
      p50: of("p50"),
      p99: of("p99"),
      mean: of("mean"),
      server_ms_per_request: of("server_ms_per_request"),
    }];
  }));
  const paired = (key: "p50" | "p99") =>
    median(rounds.map((round) => round.get("terret")![key] / round.get("pi")![key]));
  const f = (value: number, digits = 3) => value.toFixed(digits).padStart(9);
  console.log(
    `Per-step harness overhead over ${TURNS} three-step turns (wall minus the server's own time, ms; median of ` +
      `${ROUNDS} round(s)), and peak RSS above baseline per concurrent agent (KiB; heap in parentheses):`,
  );
  console.log(
    `${"harness".padEnd(8)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"mean".padStart(9)} ${
      "RSS@100".padStart(16)
    } ${"RSS@500".padStart(16)}  (wall@500)`,
  );
  for (const name of TIMED) {
    const l = latencies.get(name)!;
    if (!HARNESSES.includes(name)) {
      console.log(`${name.padEnd(8)} ${f(l.p50)} ${f(l.p99)} ${f(l.mean)}`);
      continue;
    }
    const m = SIZES.map((size) => memories.get(`${name}@${size}`)!);
    console.log(
      `${name.padEnd(8)} ${f(l.p50)} ${f(l.p99)} ${f(l.mean)} ${
        m.map((x) =>
          `${f(x.rss_kib_per_agent, 1)} (${x.heap_kib_per_agent.toFixed(1)})`.padStart(16)
        )
          .join(" ")
      }  (${m[1]!.wall_ms.toFixed(0)} ms)`,
    );
  }
  const t = latencies.get("terret")!;
  const p = latencies.get("pi")!;
  console.log(
    `server's own time: ${t.server_ms_per_request.toFixed(3)} ms per request (terret run), ` +
      `${p.server_ms_per_request.toFixed(3)} (pi run)`,
  );
  console.log(`terret p50 ${t.p50.toFixed(3)} ms (target < 1 ms): ${t.p50 < 1 ? "met" : "MISSED"}`);
  console.log(
    `terret/pi p50 ${paired("p50").toFixed(2)}x, median of per-round ratios (target <= 0.4x): ${
      paired("p50") <= 0.4 ? "met" : "MISSED"
    }; p99 ${paired("p99").toFixed(2)}x; fetch floor/pi p50 ${
      median(rounds.map((round) => round.get("fetch")!.p50 / round.get("pi")!.p50)).toFixed(2)
    }x; durable floor/pi p50 ${
      median(rounds.map((round) => round.get("durable")!.p50 / round.get("pi")!.p50)).toFixed(2)
    }x`,
  );
  for (const size of SIZES) {
    const ratio = memories.get(`terret@${size}`)!.rss_kib_per_agent /
      memories.get(`pi@${size}`)!.rss_kib_per_agent;
    console.log(
      `terret/pi RSS per agent @${size}: ${ratio.toFixed(2)}x (target <= 1x): ${
        ratio <= 1 ? "met" : "MISSED"
      }`,
    );
  }
}

if (Deno.args[0] === "--server") serve();
else if (Deno.args[0] === "--worker") await worker(Deno.args);
else await main();
