// deno-lint-ignore-file no-console
/**
 * `GET /v1/agents?limit=100` (`--limit`; the web console asks for 1,000 every 3 s while its list is shown) on a large
 * SQLite store, and what the pages cost the socket's other requests.
 *
 * The store: `--sessions` sessions (default 10,000; 2,000 with `--quick`) of `--events` events each (default 200),
 * in turns of a user message, an answer and one step with its usage. The server (this process): the agent stack over
 * that file and the socket. The client (a child process, so its requests cross the network stack like any
 * client's) runs rounds; each round, in an order rotated per round:
 *
 * - `idle`: `GET /healthz` one request after another, 200 of them, and no page in flight: the baseline;
 * - `pages`: a page not asked for before (cold: its agents' usage is read from the store), then the same page
 *   again (warm), while `GET /healthz` runs one request after another beside them. When the store holds fewer pages
 *   than rounds, later rounds ask for pages again (warm only).
 *
 * Printed: the median cold and warm page, and `/healthz` median and longest wait with and without pages in flight,
 * with the medians of the per-round ratios against the idle window. A page that held the event loop shows up as a
 * long `/healthz` wait.
 *
 * Run: deno run -A --lock=bench/deno.lock bench/agent_directory.ts [--quick] [--sessions=N] [--events=N] [--limit=N]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { createAgentStack, scriptedAdapter } from "@terret/core/testing";
import { type SessionEvent, SqliteSessionStore } from "@terret/core/sessions";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { median } from "./_measure.ts";

const TOKEN = "bench-directory-token-0123456789";
const IDLE_REQUESTS = 200;

if (Deno.args[0] === "--client") {
  await client(
    Number(Deno.args[1]),
    Number(Deno.args[2]),
    Number(Deno.args[3]),
    Number(Deno.args[4]),
  );
  Deno.exit(0);
}

const quick = Deno.args.includes("--quick");
const arg = (name: string, fallback: number): number =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const SESSIONS = arg("sessions", quick ? 2000 : 10_000);
const EVENTS = arg("events", 200);
const LIMIT = arg("limit", 100);
const ROUNDS = quick ? 5 : 9;

/** The id of session `n`, sortable. */
function idOf(n: number): string {
  return `agent-${String(n).padStart(6, "0")}`;
}

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
  for (let turn = 0; events.length < EVENTS - 6; turn++) {
    push("turn/start", { agent_id: id });
    push("step/start", { step: 1 });
    push("user/message", { content: `Turn ${turn}: go on with the work` });
    push("assistant/message", { parts: [{ type: "text", text: "Done." }] });
    push("step/end", {
      step: 1,
      usage: { input_tokens: 10, output_tokens: 5, cost: 0.001 },
      finish_reason: "stop",
    });
    push("turn/end", { status: "completed" });
  }
  return events;
}

const dir = await Deno.makeTempDir({ prefix: "terret-bench-directory-" });
const path = `${dir}/sessions.db`;
const built = performance.now();
{
  const store = SqliteSessionStore.open({ path });
  for (let n = 0; n < SESSIONS; n++) await store.importSession(session(idOf(n)));
  await store.close();
}
console.log(
  `agent_directory: ${SESSIONS} sessions of ${EVENTS} events built in ${
    ((performance.now() - built) / 1000).toFixed(1)
  } s`,
);

{
  await using stack = await createAgentStack({ adapter: scriptedAdapter([]), sqlitePath: path });
  stack.ctx.plugin(WsInterface, { port: 0, tokens: [{ token: TOKEN, agents: ["*"] }] }, {
    id: "interfaces.ws",
  });
  await stack.ctx.idle();
  const port = stack.ctx.get(WsServiceKey).port;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      fileURLToPath(import.meta.url),
      "--client",
      String(port),
      String(ROUNDS),
      String(SESSIONS),
      String(LIMIT),
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const status = await child.status;
  if (!status.success) throw new Error(`the client failed with code ${status.code}`);
}
await Deno.remove(dir, { recursive: true });

/** The client: the rounds, then the report. */
async function client(
  port: number,
  rounds: number,
  sessions: number,
  limit: number,
): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const health = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${base}/healthz`);
    await response.arrayBuffer();
    return performance.now() - started;
  };
  const page = async (after: string): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${base}/v1/agents?limit=${limit}&after=${after}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = await response.json() as { agents: unknown[] };
    if (response.status !== 200 || body.agents.length !== limit) {
      throw new Error(`a page answered ${response.status} with ${body.agents?.length} agents`);
    }
    return performance.now() - started;
  };
  const idle: number[][] = [];
  const busy: number[][] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < 20; i++) await health();
  for (let round = 0; round < rounds; round++) {
    // Pages spread over the store, each asked for the first time in its round while the store has that many.
    const pages = Math.max(1, Math.min(rounds, Math.floor((sessions - 1) / limit)));
    const first = round < pages;
    const after = idOf(Math.floor((round % pages) * (sessions - limit - 1) / pages));
    const windows = [
      async () => {
        const waits: number[] = [];
        for (let i = 0; i < IDLE_REQUESTS; i++) waits.push(await health());
        idle.push(waits);
      },
      async () => {
        let paging = true;
        const waits: number[] = [];
        const beside = (async () => {
          while (paging) waits.push(await health());
        })();
        const visit = await page(after);
        if (first) cold.push(visit);
        warm.push(await page(after));
        paging = false;
        await beside;
        busy.push(waits);
      },
    ];
    for (let k = 0; k < windows.length; k++) await windows[(k + round) % windows.length]!();
  }
  const ratio = (of: (waits: number[]) => number): number =>
    median(busy.map((waits, round) => of(waits) / of(idle[round]!)));
  const longest = (waits: number[]): number => Math.max(...waits);
  console.log(`${rounds} rounds; GET /v1/agents?limit=${limit}:`);
  console.log(`  cold page (usage read from the store) median ${median(cold).toFixed(1)} ms`);
  console.log(`  warm page (the same page again)       median ${median(warm).toFixed(1)} ms`);
  console.log("GET /healthz waits (ms), median over rounds of each window's median and longest:");
  console.log(
    `  idle (the baseline)   median ${median(idle.map(median)).toFixed(2)}  longest ${
      median(idle.map(longest)).toFixed(1)
    }`,
  );
  console.log(
    `  beside the pages      median ${median(busy.map(median)).toFixed(2)}  longest ${
      median(busy.map(longest)).toFixed(1)
    }  (${busy.reduce((n, waits) => n + waits.length, 0)} requests)`,
  );
  console.log(
    `  ratios beside / idle: median ${ratio(median).toFixed(2)}x, longest ${
      ratio(longest).toFixed(2)
    }x`,
  );
}
