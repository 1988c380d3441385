// deno-lint-ignore-file no-console
/**
 * Memory of many agents in a real `trt serve`: 10,000 idle sessions in the SQLite store, `max_agents` 128. Reads the
 * server's RSS (VmRSS) after boot, after 128 agents are made resident, and after all 10,000 have been touched
 * (each rehydrated on connect, then evicted to make room), and prints RSS per resident and per evicted agent. The
 * baseline is the same server with the sessions in the store and no agent resident.
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
    args: ["run", "-A", MAIN, "serve", "--home", home, "--patch", `${home}/serve.yml`],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
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
  await settle();
  const boot = rssOf(child.pid);
  await touch(RESIDENT, 0);
  await settle();
  const resident = rssOf(child.pid);
  await touch(SESSIONS - RESIDENT, RESIDENT);
  await settle();
  const all = rssOf(child.pid);
  // A second pass over every agent: a leak per eviction would grow RSS again by as much.
  await touch(SESSIONS, 0);
  await settle();
  const again = rssOf(child.pid);
  child.kill("SIGTERM");
  while (!(await reader.read()).done);
  await child.status;
  const evicted = SESSIONS - RESIDENT;
  console.log(`trt serve, ${SESSIONS} idle sessions in SQLite, max_agents ${RESIDENT}`);
  console.log(`RSS after boot (0 resident, baseline)        ${mb(boot)}`);
  console.log(`RSS with ${RESIDENT} resident                        ${mb(resident)}`);
  console.log(`RSS after touching all ${SESSIONS} (${evicted} evicted) ${mb(all)}`);
  console.log(`per resident agent  ${kb((resident - boot) / RESIDENT)}`);
  console.log(`RSS after a second pass over all ${SESSIONS}           ${mb(again)}`);
  console.log(
    `per evicted agent   ${kb((all - resident) / evicted)} (first pass), ${
      kb((again - all) / SESSIONS)
    } (second pass: growth per eviction once the heap is warm)`,
  );
  console.log(
    `RSS growth from ${RESIDENT} resident to all touched: ${(all / resident).toFixed(3)}x`,
  );
} finally {
  await Deno.remove(home, { recursive: true });
}
