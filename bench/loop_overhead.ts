// deno-lint-ignore-file no-console
/**
 * The loop's harness overhead, against one instant fake OpenRouter server (its own process), for three harnesses
 * running the same 3-step tool turn (tool call, tool call, text answer; system prompt, one user message, one tool):
 *
 * - `terret`: the rows `trt serve` mounts (the `headless` profile booted through `Terret.boot`: credentials and
 *   redaction, whose scrubber is on by default; the SQLite store, every event durable; sessions; the OpenRouter
 *   adapter; fs, sandbox, subprocess, shell, terminals; tools, the standard tools and the allow list; prompt;
 *   agents; the default loop; the WebSocket row) in production mode, one fresh agent per turn. The one patch: the
 *   fake server as the model, `sandbox-none` (no step here runs a program), `work` allowed, the socket on a free
 *   port, automatic titles off (a title is one more model request after each session's first turn, not a step);
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
 * Latency: one live worker process per harness (warmed up first), driven in rounds: each round runs a batch of
 * turns on every harness, the order rotated per round, so the load of the moment (the machine is shared) falls on
 * every harness of a round alike. A turn's steps are cut where the server sees each request after the first (its
 * clock offset measured at start); a step's overhead is its wall time minus the server's own time for its one
 * request. p50 and p99 are over every step of every round; the ratios are medians of the per-round ratios of each
 * batch's median step. CPU per step (user + system time of the whole harness process, every thread, over the timed
 * turns) is printed beside it: scheduling delays on a loaded machine move it least. Making the fresh agent and its
 * session is not timed. Memory is the peak RSS above the baseline (after set-up and warm-up, after a full GC) while
 * N agents each run one 3-step turn at once, divided by N, for N = 100 and 500, each in a fresh process.
 *
 * With `--breakdown`, two more Terret workers join the rounds: `terret-a` without the scrubber rows (redaction and
 * credentials), `terret-b` with the core rows only (also without fs, subprocess, shell, terminals, jobs, the ACP
 * subagents, the standard tools and the socket: jobs and the ACP subagents need a subprocess), and the ratios between
 * them say what those rows cost per step.
 *
 * With `--telemetry`, Terret without the `telemetry` row joins the rounds: the ratio is what the row costs per step
 * when it is off (`OTEL_DENO` unset, as here).
 *
 * With `--without=<row,row>` (repeatable), Terret without those rows joins the rounds, and the ratio is what they
 * cost per step. With `--cpu-prof=<dir>`, the `terret` latency worker writes a V8 CPU profile to that directory.
 *
 * Run: deno run -A bench/loop_overhead.ts [--quick] [--latency-only] [--breakdown] [--telemetry]
 *   [--without=<row,row>]... [--cpu-prof=<dir>]
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { fileURLToPath } from "node:url";
import { sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { BENCH_LOCK_FLAG } from "./_measure.ts";

const SELF = fileURLToPath(import.meta.url);
const SYSTEM = "You do the work you are asked, with the work tool.";
const PROMPT = "Do the work";
const TOOL_PARAMETERS = {
  type: "object",
  properties: { step: { type: "number" } },
  required: ["step"],
};

/** Turns measured per harness (after the warm-up). */
const WARM = Deno.args.includes("--quick") ? 100 : 300;
const SIZES = [100, 500];
/** Latency rounds: each runs every harness once (order rotated); figures are medians over rounds. */
const ROUNDS = Deno.args.includes("--quick") ? 12 : 40;
/** Turns per harness per round. */
const BATCH = Deno.args.includes("--quick") ? 8 : 10;
/** Turns measured per harness (after the warm-up). */
const TURNS = ROUNDS * BATCH;

/**
 * Terret with some of the serve rows disabled (`--breakdown`): what those rows cost, in the same rounds. The name
 * after the colon lists the disabled row ids.
 */
type Variant = `terret:${string}`;
type Harness = "terret" | "pi" | "fetch" | "durable" | Variant;
/** The `--breakdown` variants: without the scrubber rows; with the core rows only (no exec, standard tools, socket). */
const VARIANTS: readonly Variant[] = [
  "terret:redaction,credentials",
  "terret:redaction,credentials,fs,subprocess,shell,terminals,jobs,subagents.acp,tools.std,interfaces.ws",
];
/** `--telemetry`: Terret without the telemetry row; terret / it is what the row costs per step when it is off. */
const NO_TELEMETRY: Variant = "terret:telemetry";
/** `--without=<row,row>` (repeatable): Terret without those rows; terret / it is what they cost per step. */
const WITHOUT: readonly Variant[] = Deno.args.filter((arg) => arg.startsWith("--without=")).map((
  arg,
) => `terret:${arg.slice("--without=".length)}` as Variant);
/** `--cpu-prof=<dir>`: the `terret` latency worker writes a V8 CPU profile there. */
const CPU_PROF = Deno.args.find((arg) => arg.startsWith("--cpu-prof="))?.slice(
  "--cpu-prof=".length,
);
/** The harnesses compared (latency and memory). */
const HARNESSES: readonly Harness[] = ["fetch", "pi", "terret"];
/** The harnesses timed (latency only for the durable floor). */
const TIMED: readonly Harness[] = [
  "fetch",
  "durable",
  "pi",
  "terret",
  ...(Deno.args.includes("--breakdown") ? VARIANTS : []),
  ...(Deno.args.includes("--telemetry") ? [NO_TELEMETRY] : []),
  ...WITHOUT,
];

/** A harness's per-step figures over every round's samples. */
interface LatencyResult {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  /** The median of each step (1, 2, 3) alone. */
  readonly by_step: readonly number[];
  /** The median over rounds of the harness's CPU time per step. */
  readonly cpu: number;
  readonly server_ms_per_request: number;
}

interface MemoryResult {
  readonly agents: number;
  readonly rss_kib_per_agent: number;
  readonly heap_kib_per_agent: number;
  readonly wall_ms: number;
}

/** Epoch milliseconds with sub-millisecond precision (comparable across processes once the offset is known). */
function now(): number {
  return performance.timeOrigin + performance.now();
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
  /** Each POST since the last `/stats`: its arrival (epoch ms, sub-ms) and the handler's own time (ms). */
  let log: [number, number][] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(port),
  }, async (request) => {
    const started = performance.now();
    if (request.method === "GET") {
      if (new URL(request.url).pathname.endsWith("/clock")) return Response.json(now());
      const requests = log;
      log = [];
      return Response.json(requests);
    }
    const body = await request.json() as { messages: { role: string }[] };
    let tools = 0;
    for (const message of body.messages) if (message.role === "tool") tools++;
    const response = new Response(bodies[Math.min(tools, 2)], {
      headers: { "content-type": "text/event-stream" },
    });
    log.push([performance.timeOrigin + started, performance.now() - started]);
    return response;
  });
  Deno.addSignalListener("SIGTERM", () => void server.shutdown());
}

// ---------------------------------------------------------------------------------------------------------------
// The harnesses: each returns a function running one 3-step turn.

/** Prepares turn `index` (untimed: a fresh agent) and returns the function running it (timed). */
type TurnRunner = (index: number) => Promise<() => Promise<void>>;

/** The credential the `credentials` row resolves (and the redactor then scrubs from every event). */
const SECRET = "sk-or-v1-bench0123456789abcdef0123456789";

/**
 * Boots the `headless` profile as `trt serve` does (every base row: workspace, credentials, redaction, SQLite
 * store, sessions, llm, fs, sandbox, subprocess, shell, terminals, tools, tools.std, tools.allow, prompt, agents,
 * loop, interfaces.ws), with one patch: the fake server as the model, `sandbox-none` (no container: no step here
 * runs a program), the `work` tool allowed, the socket on a free port, automatic titles off (a title is a model
 * request of its own after a session's first turn, outside the steps measured).
 */
async function terret(
  baseUrl: string,
  dir: string,
  maxAgents: number,
  disabled: readonly string[] = [],
): Promise<TurnRunner> {
  const { Terret } = await import("@terret/terret");
  const core = await import("@terret/core");
  const { createMemoryLogger } = await import("@terret/hames");
  await Deno.mkdir(`${dir}/ws`);
  await Deno.writeTextFile(
    `${dir}/bench.yml`,
    JSON.stringify({
      // A disabled row replaces its patch (a patch names each row once).
      rows: [
        { id: "workspace", config: { dirs: [`${dir}/ws`] } },
        { id: "sandbox", plugin: "sandbox-none", config: { acknowledge_unsandboxed: true } },
        {
          id: "llm.main",
          config: { model: "test/model", base_url: baseUrl, api_key: SECRET, max_retries: 0 },
        },
        { id: "tools.allow", config: { allow: ["work"] } },
        { id: "agents", config: { max_agents: maxAgents } },
        // Each turn runs on a fresh session, and the titler would title each after its first turn with a model
        // request of its own, outside the turn's steps.
        { id: "titles", config: { auto: false } },
        {
          id: "interfaces.ws",
          config: { port: 0, tokens: [{ token: "bench-token-0123456789", agents: ["*"] }] },
        },
      ].filter((row) => !disabled.includes(row.id)).concat(
        disabled.map((id) => ({ id, disabled: true }) as never),
      ),
    }),
  );
  Deno.env.set("OPENROUTER_API_KEY", SECRET);
  const env = new Map([["OPENROUTER_API_KEY", SECRET], ["HOME", dir]]);
  const booted = await Terret.boot("headless", {
    home: `${dir}/home`,
    cwd: dir,
    patches: [`${dir}/bench.yml`],
    env: { get: (name: string) => env.get(name) },
    context: { mode: "production", logger: createMemoryLogger() },
  });
  const ctx = booted.ctx;
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
  if (name === "terret" || name.startsWith("terret:")) {
    const disabled = name === "terret" ? [] : name.slice("terret:".length).split(",");
    return await terret(baseUrl, dir, Math.max(agents, TURNS + WARM) + 10, disabled);
  }
  if (name === "pi") return await pi(baseUrl);
  if (name === "durable") return await durableLoop(baseUrl, dir);
  return fetchLoop(baseUrl);
}

// ---------------------------------------------------------------------------------------------------------------
// The worker (one process per harness and measurement).

/** The POSTs the server saw since the last call: [arrival (server clock, epoch ms), handler ms]. */
async function serverLog(baseUrl: string): Promise<[number, number][]> {
  return await (await fetch(`${baseUrl}/stats`)).json();
}

/**
 * The server clock minus ours (ms), from the round trip with the smallest spread of 30 `/clock` requests: both
 * are epoch clocks of one machine, so this only corrects their sub-millisecond start-up skew.
 */
async function clockOffset(baseUrl: string): Promise<number> {
  let best = { spread: Infinity, offset: 0 };
  for (let i = 0; i < 30; i++) {
    const sent = now();
    const server = await (await fetch(`${baseUrl}/clock`)).json() as number;
    const received = now();
    if (received - sent < best.spread) {
      best = { spread: received - sent, offset: server - (sent + received) / 2 };
    }
  }
  return best.offset;
}

/** One batch of turns: each step's overhead (ms, three per turn in order) and the server's time per request. */
interface Batch {
  readonly steps: readonly number[];
  readonly server_ms: number;
  /** The harness process's CPU time (user + system, every thread) per step, ms. */
  readonly cpu_ms: number;
}

/**
 * A latency worker: warms its harness up, prints `ready`, then runs a batch of turns for every number read from
 * stdin (0 ends), printing each batch's per-step overheads. A turn's steps are cut at the server's arrival of each
 * request after the first: step 1 runs from handing the agent its message to the arrival of request 2, step 2 to
 * the arrival of request 3, step 3 to the turn's end. Each step holds exactly one request; its overhead is its
 * wall time minus the server's own time for that request.
 */
async function latency(name: Harness, baseUrl: string, dir: string): Promise<void> {
  const turn = await harness(name, baseUrl, dir, 0);
  for (let i = 0; i < WARM; i++) await (await turn(i))();
  const offset = await clockOffset(baseUrl);
  console.log("ready");
  let index = WARM;
  let input = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    input += chunk;
    let end: number;
    while ((end = input.indexOf("\n")) !== -1) {
      const count = Number(input.slice(0, end));
      input = input.slice(end + 1);
      if (count === 0) return;
      console.log(JSON.stringify(await batch(count)));
    }
  }

  async function batch(count: number): Promise<Batch> {
    await serverLog(baseUrl);
    const steps: number[] = [];
    let server = 0;
    let cpu = 0;
    for (let i = 0; i < count; i++) {
      const run = await turn(index++);
      const cpuBefore = cpuUsage();
      const started = now() + offset;
      await run();
      const ended = now() + offset;
      const cpuSpent = cpuUsage(cpuBefore);
      cpu += (cpuSpent.user + cpuSpent.system) / 1000;
      const requests = await serverLog(baseUrl);
      if (requests.length !== 3) {
        throw new Error(`${name}: a turn made other than 3 requests: ${JSON.stringify(requests)}`);
      }
      const cuts = [started, requests[1]![0], requests[2]![0], ended];
      for (let k = 0; k < 3; k++) {
        steps.push(cuts[k + 1]! - cuts[k]! - requests[k]![1]);
        server += requests[k]![1];
      }
    }
    return { steps, server_ms: server / (count * 3), cpu_ms: cpu / (count * 3) };
  }
}

/** A running latency worker, driven a batch at a time. */
class LatencyWorker {
  readonly #child: Deno.ChildProcess;
  readonly #lines: ReadableStreamDefaultReader<string>;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #buffered = "";

  constructor(name: Harness, baseUrl: string) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        BENCH_LOCK_FLAG,
        "--v8-flags=--expose-gc",
        ...(CPU_PROF !== undefined && name === "terret"
          ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`]
          : []),
        SELF,
        "--worker",
        name,
        baseUrl,
        "latency",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#stdin = this.#child.stdin.getWriter();
  }

  /** The next line the worker prints. */
  async line(): Promise<string> {
    for (;;) {
      const end = this.#buffered.indexOf("\n");
      if (end !== -1) {
        const line = this.#buffered.slice(0, end);
        this.#buffered = this.#buffered.slice(end + 1);
        return line;
      }
      const { value, done } = await this.#lines.read();
      if (done) throw new Error("a latency worker ended early");
      this.#buffered += value;
    }
  }

  async batch(turns: number): Promise<Batch> {
    await this.#stdin.write(new TextEncoder().encode(`${turns}\n`));
    return JSON.parse(await this.line());
  }

  async close(): Promise<void> {
    await this.#stdin.write(new TextEncoder().encode("0\n"));
    await this.#stdin.close();
    await this.#lines.cancel();
    await this.#child.status;
  }
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
    if (what === "latency") await latency(name, baseUrl, dir);
    else console.log(JSON.stringify(await memory(name, baseUrl, dir, Number(what))));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  Deno.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The orchestrator.

async function run(args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH_LOCK_FLAG, "--v8-flags=--expose-gc", SELF, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`worker ${args.join(" ")} failed`);
  return new TextDecoder().decode(output.stdout).trim().split("\n").at(-1)!;
}

async function main(): Promise<void> {
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH_LOCK_FLAG, SELF, "--server"],
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
    // One live worker per harness, started (and warmed up) one at a time; then rounds of one batch each, the
    // order rotated per round, so the load of the moment falls on every harness of a round alike.
    const workers = new Map<Harness, LatencyWorker>();
    for (const name of TIMED) {
      const worker = new LatencyWorker(name, baseUrl);
      if (await worker.line() !== "ready") throw new Error(`the ${name} worker did not start`);
      workers.set(name, worker);
    }
    const rounds: Map<Harness, Batch>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = new Map<Harness, Batch>();
      for (let i = 0; i < TIMED.length; i++) {
        const name = TIMED[(i + round) % TIMED.length]!;
        results.set(name, await workers.get(name)!.batch(BATCH));
      }
      rounds.push(results);
    }
    for (const worker of workers.values()) await worker.close();
    const memories = new Map<string, MemoryResult>();
    for (const name of Deno.args.includes("--latency-only") ? [] : HARNESSES) {
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

/** The `q` quantile of `values` (nearest rank). */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function report(
  rounds: readonly Map<Harness, Batch>[],
  memories: Map<string, MemoryResult>,
): void {
  const latencies = new Map<Harness, LatencyResult>(TIMED.map((name) => {
    const all = rounds.flatMap((round) => round.get(name)!.steps);
    return [name, {
      p50: quantile(all, 0.5),
      p99: quantile(all, 0.99),
      mean: all.reduce((sum, value) => sum + value, 0) / all.length,
      by_step: [0, 1, 2].map((k) => median(all.filter((_, i) => i % 3 === k))),
      cpu: median(rounds.map((round) => round.get(name)!.cpu_ms)),
      server_ms_per_request: median(rounds.map((round) => round.get(name)!.server_ms)),
    }];
  }));
  /** p50: the median over rounds of a's batch median divided by b's in the same round; p99: pooled. */
  const paired = (a: Harness, b: Harness, key: "p50" | "p99") =>
    key === "p50"
      ? median(rounds.map((round) => median(round.get(a)!.steps) / median(round.get(b)!.steps)))
      : latencies.get(a)!.p99 / latencies.get(b)!.p99;
  const f = (value: number, digits = 3) => value.toFixed(digits).padStart(9);
  console.log(
    `Per-step harness overhead (wall minus the server's own time, ms) over ${TURNS} three-step turns per ` +
      `harness, in ${ROUNDS} rounds of ${BATCH} turns, and peak RSS above baseline per concurrent agent ` +
      "(KiB; heap in parentheses):",
  );
  console.log(
    `${"harness".padEnd(8)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"mean".padStart(9)} ${
      "step1/2/3 p50".padStart(23)
    } ${"cpu/step".padStart(9)} ${"RSS@100".padStart(16)} ${"RSS@500".padStart(16)}  (wall@500)`,
  );
  for (const name of TIMED) {
    const l = latencies.get(name)!;
    const row = `${
      (VARIANTS.indexOf(name as Variant) === -1
        ? name
        : `terret-${"ab"[VARIANTS.indexOf(name as Variant)]}`).padEnd(8)
    } ${f(l.p50)} ${f(l.p99)} ${f(l.mean)} ${
      l.by_step.map((value) => value.toFixed(3)).join("/").padStart(23)
    } ${f(l.cpu)}`;
    if (!HARNESSES.includes(name) || memories.size === 0) {
      console.log(row);
      continue;
    }
    const m = SIZES.map((size) => memories.get(`${name}@${size}`)!);
    if (m.includes(undefined as never)) {
      console.log(row);
      continue;
    }
    console.log(
      `${row} ${
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
  console.log(
    "ratios (p50: median of per-round ratios of each round's median step; p99: of all steps):",
  );
  const target = (value: number, limit: number) =>
    `${value.toFixed(2)}x (target <= ${limit}x: ${value <= limit ? "met" : "MISSED"})`;
  console.log(
    `  terret / durable floor p50 ${target(paired("terret", "durable", "p50"), 1.25)}; p99 ${
      paired("terret", "durable", "p99").toFixed(2)
    }x`,
  );
  console.log(
    `  terret / pi p50 ${target(paired("terret", "pi", "p50"), 0.6)}; p99 ${
      paired("terret", "pi", "p99").toFixed(2)
    }x`,
  );
  const cpu = (a: Harness, b: Harness) =>
    median(rounds.map((round) => round.get(a)!.cpu_ms / round.get(b)!.cpu_ms)).toFixed(2);
  console.log(
    `  CPU per step (every thread of the harness process; load moves it least): terret / durable ` +
      `${cpu("terret", "durable")}x, terret / pi ${cpu("terret", "pi")}x, durable / fetch ${
        cpu("durable", "fetch")
      }x`,
  );
  if (VARIANTS.every((variant) => TIMED.includes(variant))) {
    const [a, b] = VARIANTS as [Variant, Variant];
    console.log(
      `  breakdown: terret / terret-a (the scrubber rows) p50 ${
        paired("terret", a, "p50").toFixed(2)
      }x, CPU ${cpu("terret", a)}x; terret-a / terret-b (exec rows, standard tools, socket) p50 ${
        paired(a, b, "p50").toFixed(2)
      }x, CPU ${cpu(a, b)}x; terret-b / durable p50 ${
        paired(b, "durable", "p50").toFixed(2)
      }x, CPU ${cpu(b, "durable")}x`,
    );
  }
  if (TIMED.includes(NO_TELEMETRY)) {
    console.log(
      `  telemetry off (OTEL_DENO unset): terret / terret without the telemetry row p50 ${
        paired("terret", NO_TELEMETRY, "p50").toFixed(3)
      }x, CPU ${cpu("terret", NO_TELEMETRY)}x`,
    );
  }
  for (const variant of WITHOUT) {
    console.log(
      `  terret / terret without ${variant.slice("terret:".length)} p50 ${
        paired("terret", variant, "p50").toFixed(3)
      }x, CPU ${cpu("terret", variant)}x`,
    );
  }
  console.log(
    `  durable floor / pi p50 ${paired("durable", "pi", "p50").toFixed(2)}x; fetch floor / pi p50 ${
      paired("fetch", "pi", "p50").toFixed(2)
    }x; durable / fetch p50 ${paired("durable", "fetch", "p50").toFixed(2)}x`,
  );
  for (const size of memories.size === 0 ? [] : SIZES) {
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
