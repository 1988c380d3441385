// deno-lint-ignore-file no-console
/**
 * Memory of many agents in a real `trt serve`: 10,000 idle sessions in the SQLite store, `max_agents` 128. Reads the
 * server's RSS (VmRSS) after boot, after 128 agents are made resident, and after all 10,000 have been touched
 * (each rehydrated on connect, then evicted to make room), and prints RSS per resident and per evicted agent. The
 * baseline is the same server with the sessions in the store and no agent resident.
 *
 * RSS alone mixes what is retained with garbage V8 has not collected yet (its heap grows to a high-water mark
 * before a full collection), so each point also forces a full collection in the server through its inspector
 * (`--inspect` on a free port, `HeapProfiler.collectGarbage`) and reads the V8 heap in use and the RSS afterwards:
 * the heap retained per resident and per evicted agent is the figure a leak would move. Columns: RSS as found, RSS
 * after the collection, V8 heap in use after it.
 *
 * Run: deno run -A bench/agents_rss.ts [--quick]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { type SessionEvent, SessionStoreKey } from "@terret/core";
import { createAgentStack } from "@terret/core/testing";

const quick = Deno.args.includes("--quick");
const SESSIONS = quick ? 2_000 : 10_000;
const RESIDENT = 128;
const PARALLEL = 8;
const TOKEN = "bench-token-0123456789abcdefghij";
const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

const home = await Deno.makeTempDir({ prefix: "terret-bench-rss-" });

function sessionOf(id: string): SessionEvent[] {
  const at = new Date(0).toISOString();
  const types: [string, unknown][] = [
    ["session/created", { meta: { agent_id: id } }],
    ["turn/start", { agent_id: id }],
    ["step/start", { step: 1 }],
    ["user/message", { content: "Hello" }],
    ["assistant/message", { parts: [{ type: "text", text: "Hi there." }] }],
    ["step/end", { step: 1, usage: { input_tokens: 10, output_tokens: 3 }, finish_reason: "stop" }],
    ["turn/end", { status: "completed" }],
  ];
  return types.map(([type, payload], i) => ({
    id: crypto.randomUUID(),
    session_id: id,
    seq: i + 1,
    at,
    type,
    payload,
    parent_id: null,
  }));
}

/** A Chrome DevTools Protocol session with the server's inspector. */
class Inspector {
  readonly #socket: WebSocket;
  readonly #waiting = new Map<number, (result: unknown) => void>();
  #id = 0;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (message) => {
      const reply = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
      if (reply.id !== undefined) this.#waiting.get(reply.id)?.(reply.result);
    };
  }

  static async open(url: string): Promise<Inspector> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error(`cannot reach the inspector at ${url}`));
    });
    return new Inspector(socket);
  }

  call(method: string, params: unknown = {}): Promise<unknown> {
    const id = ++this.#id;
    const reply = new Promise<unknown>((resolve) => this.#waiting.set(id, resolve));
    this.#socket.send(JSON.stringify({ id, method, params }));
    return reply;
  }

  /** The V8 heap in use after a full collection, in bytes. */
  async heapAfterGc(): Promise<number> {
    await this.call("HeapProfiler.collectGarbage");
    const reply = await this.call("Runtime.evaluate", {
      expression: "Deno.memoryUsage().heapUsed",
    }) as { result: { value: number } };
    return reply.result.value;
  }

  close(): void {
    this.#socket.close();
  }
}

function rssOf(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;

try {
  await Deno.mkdir(`${home}/sessions`, { recursive: true });
  {
    await using stack = await createAgentStack({ sqlitePath: `${home}/sessions/terret.db` });
    const store = stack.ctx.get(SessionStoreKey);
    for (let i = 0; i < SESSIONS; i++) await store.importSession(sessionOf(`a-${i}`));
  }
  await Deno.writeTextFile(
    `${home}/serve.yml`,
    [
      "rows:",
      "  - id: sandbox",
      "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
      "  - id: llm.main",
      "    config: { model: test/model, api_key: no-request-is-made }",
      "  - id: agents",
      `    config: { max_agents: ${RESIDENT} }`,
      "  - id: interfaces.ws",
      `    config: { port: 0, tokens: [{ token: ${TOKEN}, agents: ["*"] }] }`,
      "",
    ].join("\n"),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--inspect=127.0.0.1:0",
      MAIN,
      "serve",
      "--home",
      home,
      "--patch",
      `${home}/serve.yml`,
    ],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const errors = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let err = "";
  while (!/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.test(err)) {
    const { value, done } = await errors.read();
    if (done) throw new Error(`serve exited: ${err}`);
    err += value;
  }
  const inspector = await Inspector.open(/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(err)![0]);
  const drainErrors = (async () => {
    while (!(await errors.read()).done);
  })();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("running until SIGINT or SIGTERM\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}`);
    out += value;
  }
  const port = Number(/ws:\/\/127\.0\.0\.1:(\d+)\//.exec(out)![1]);
  const touch = async (count: number, offset: number): Promise<void> => {
    let next = offset;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < offset + count; i = next++) {
        const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/agents/a-${i}/stream`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        await new Promise<void>((resolve, reject) => {
          socket.onmessage = () => socket.close();
          socket.onclose = () => resolve();
          socket.onerror = () => reject(new Error(`cannot connect to a-${i}`));
        });
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
  /** RSS as found, then the V8 heap and RSS after a full collection. */
  const point = async (): Promise<{ rss: number; heap: number; collected: number }> => {
    await settle();
    const rss = rssOf(child.pid);
    const heap = await inspector.heapAfterGc();
    return { rss, heap, collected: rssOf(child.pid) };
  };
  const boot = await point();
  await touch(RESIDENT, 0);
  const resident = await point();
  await touch(SESSIONS - RESIDENT, RESIDENT);
  const all = await point();
  // A second pass over every agent: a leak per eviction would grow memory again by as much.
  await touch(SESSIONS, 0);
  const again = await point();
  inspector.close();
  child.kill("SIGTERM");
  while (!(await reader.read()).done);
  await drainErrors;
  await child.status;
  const evicted = SESSIONS - RESIDENT;
  const row = (label: string, at: { rss: number; heap: number; collected: number }): string =>
    `${label.padEnd(44)} ${mb(at.rss).padStart(9)} ${mb(at.collected).padStart(9)} ${
      mb(at.heap).padStart(9)
    }`;
  const per = (key: "rss" | "heap" | "collected"): string =>
    `${kb((resident[key] - boot[key]) / RESIDENT)} per resident, ${
      kb((all[key] - resident[key]) / evicted)
    } per evicted (first pass), ${kb((again[key] - all[key]) / SESSIONS)} per agent (second pass)`;
  console.log(`trt serve, ${SESSIONS} idle sessions in SQLite, max_agents ${RESIDENT}`);
  console.log(
    `${"".padEnd(44)} ${"RSS".padStart(9)} ${"RSS, GCed".padStart(9)} ${"heap, GCed".padStart(9)}`,
  );
  console.log(row("after boot (0 resident, baseline)", boot));
  console.log(row(`with ${RESIDENT} resident`, resident));
  console.log(row(`after touching all ${SESSIONS} (${evicted} evicted)`, all));
  console.log(row(`after a second pass over all ${SESSIONS}`, again));
  console.log(`RSS as found:             ${per("rss")}`);
  console.log(`RSS after a collection:   ${per("collected")}`);
  console.log(`V8 heap retained:         ${per("heap")}`);
} finally {
  await Deno.remove(home, { recursive: true });
}
