// deno-lint-ignore-file no-console
/**
 * PostgreSQL store benchmark, in one run on a throwaway cluster (tests/postgres/cluster.ts, fsync on):
 *
 * 1. Durable appends per second with 100 agents (each a sequential writer of chunk events, all at once): through the
 *    sessions log (validation and encoding included, as an agent appends) and through the store alone, against the
 *    baseline of raw postgres.js inserts of the same rows at the same batch size (100 rows per transaction, one
 *    multi-row `INSERT … SELECT FROM unnest(…)` into the same table shape with `UNIQUE (session_id, seq)`, seqs
 *    computed client-side, a prepared statement, one transaction at a time). The fenced case appends the same rows
 *    through `appendFenced` under a lease held on every agent (the fence check rides in the write statement), and is
 *    reported against both the unfenced store path and raw; the fleet case appends through the sessions log with
 *    every agent fenced (`store.fence`), as a fleet node appends for the agents it holds. Rounds run the cases in an
 *    order rotated per round; ratios are medians of per-round ratios (target ≥ 0.8×).
 * 2. Cross-node tail latency: two stores on separate connections (two nodes' worth: the notification goes through
 *    the server as between processes), a stream on node B, sequential appends on node A; latency from A's append
 *    resolving (durable) to B's stream yielding it; p50/p99 (target p99 < 20 ms).
 *
 * Run: deno run -A --lock=bench/deno.lock bench/postgres_store.ts [--quick] [--rounds=N]
 *
 * @module
 */
import postgres from "npm:postgres@^3.4.9";
import { createContext, createMemoryLogger } from "@terret/hames";
import { SessionLog } from "@terret/core";
import { PostgresSessionStore } from "@terret/core/postgres";
import { postgresLane } from "../tests/postgres/cluster.ts";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const AGENTS = 100;
const PER_AGENT = quick ? 30 : 100;
const roundsArg = Deno.args.find((arg) => arg.startsWith("--rounds="));
const ROUNDS = roundsArg !== undefined
  ? Number(roundsArg.slice("--rounds=".length))
  : quick
  ? 3
  : 5;
const TAIL_SAMPLES = quick ? 200 : 1000;

const lane = await postgresLane();
if (lane.cluster === undefined) {
  console.log(`bench/postgres_store.ts: skipped: ${lane.skip}`);
  Deno.exit(0);
}
const url = await lane.cluster.createDatabase("bench");
const chunkPayload = { kind: "text", text: "hello world, this is one streamed chunk of text" };
const payloadJson = JSON.stringify(chunkPayload);
let schemas = 0;

/**
 * How the agents append: through the sessions log, the store's `append`, `appendFenced` under held leases, or the
 * sessions log with every agent fenced (`store.fence`, as a fleet node runs the agents it holds).
 */
type Path = "log" | "store" | "fenced" | "fleet";

async function viaStore(path: Path): Promise<{ ms: number; groupSize: number }> {
  const store = await PostgresSessionStore.open({ url, schema: `b_${++schemas}`, listen: false });
  const ctx = createContext({ mode: "production", logger: createMemoryLogger() });
  const log = new SessionLog(ctx, store);
  const ids = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
  await Promise.all(ids.map((id) => log.create({ session_id: id })));
  const leases = new Map<string, { readonly token: number }>();
  if (path === "fenced" || path === "fleet") {
    for (const id of ids) {
      const lease = await store.leases.acquire(id, store.node, 600_000);
      if (lease === undefined) throw new Error(`the lease of "${id}" was not granted`);
      leases.set(id, lease);
      if (path === "fleet") {
        store.fence(id, lease, (error) => {
          throw error;
        });
      }
    }
  }
  const before = store.stats();
  const started = performance.now();
  await Promise.all(ids.map(async (id) => {
    for (let i = 0; i < PER_AGENT; i++) {
      if (path === "log" || path === "fleet") {
        await log.append(id, { type: "assistant/chunk", payload: chunkPayload });
        continue;
      }
      const draft = {
        id: crypto.randomUUID(),
        session_id: id,
        at: new Date().toISOString(),
        type: "assistant/chunk",
        payload: chunkPayload,
        parent_id: null,
        payload_json: payloadJson,
        expect: "existing",
      } as const;
      if (path === "store") await store.append(draft);
      else await store.appendFenced(draft, leases.get(id)!);
    }
  }));
  const ms = performance.now() - started;
  const after = store.stats();
  await ctx.dispose();
  await store.close();
  return { ms, groupSize: (after.events - before.events) / (after.groups - before.groups) };
}

async function rawInserts(batch: number): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const table = `raw_${++schemas}`;
  await sql.unsafe(
    `CREATE TABLE ${table} (session_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, id text NOT NULL,
     at text NOT NULL, type text NOT NULL, parent_id text, payload json NOT NULL, UNIQUE (session_id, seq))`,
  );
  const total = AGENTS * PER_AGENT;
  const started = performance.now();
  for (let done = 0; done < total;) {
    const n = Math.min(batch, total - done);
    const rows = Array.from({ length: n }, (_, k) => done + k);
    await sql.begin((tx) =>
      tx.unsafe(
        `INSERT INTO ${table} (session_id, seq, id, at, type, parent_id, payload) SELECT s, q, i, a, t, p, ` +
          "j::json FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], " +
          "$7::text[]) AS v(s, q, i, a, t, p, j)",
        [
          rows.map((r) => `agent-${r % AGENTS}`),
          rows.map((r) => Math.floor(r / AGENTS) + 2),
          rows.map(() => crypto.randomUUID()),
          rows.map(() => new Date().toISOString()),
          rows.map(() => "assistant/chunk"),
          rows.map(() => null),
          rows.map(() => payloadJson),
        ] as never[],
        { prepare: true },
      )
    );
    done += n;
  }
  const ms = performance.now() - started;
  await sql.end();
  return ms;
}

console.log(
  `PostgreSQL store: ${AGENTS} agents x ${PER_AGENT} appends, ${ROUNDS} rounds (order rotated), fsync on`,
);
const cases: Record<string, () => Promise<number>> = {};
const groups: number[] = [];
cases["log"] = async () => {
  const { ms, groupSize } = await viaStore("log");
  groups.push(groupSize);
  return ms;
};
cases["store"] = async () => (await viaStore("store")).ms;
cases["fenced"] = async () => (await viaStore("fenced")).ms;
cases["fleet"] = async () => (await viaStore("fleet")).ms;
cases["raw"] = () => rawInserts(AGENTS);
const names = Object.keys(cases);
const times = new Map<string, number[]>(names.map((name) => [name, []]));
await cases["log"]!(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length]!;
    times.get(name)!.push(await cases[name]!());
  }
}
const total = AGENTS * PER_AGENT;
const rate = (name: string): number => total / (median(times.get(name)!) / 1000);
const ratio = (name: string, baseline = "raw"): number =>
  median(times.get(baseline)!.map((base, round) => base / times.get(name)![round]!));
console.log(
  `  raw postgres.js, ${AGENTS} rows per transaction: ${rate("raw").toFixed(0)} events/s`,
);
console.log(
  `  store (append):   ${rate("store").toFixed(0)} events/s = ${ratio("store").toFixed(2)}x raw`,
);
console.log(
  `  store (appendFenced, leases held): ${rate("fenced").toFixed(0)} events/s = ${
    ratio("fenced").toFixed(2)
  }x raw = ${ratio("fenced", "store").toFixed(2)}x unfenced append`,
);
console.log(
  `  sessions log:     ${rate("log").toFixed(0)} events/s = ${ratio("log").toFixed(2)}x raw ` +
    `(target >= 0.8x); median group ${median(groups).toFixed(0)} events`,
);
console.log(
  `  sessions log, every agent fenced (a fleet node): ${rate("fleet").toFixed(0)} events/s = ${
    ratio("fleet").toFixed(2)
  }x raw`,
);

// Cross-node tail latency.
async function node(schema: string) {
  const store = await PostgresSessionStore.open({ url, schema });
  const ctx = createContext({ mode: "production", logger: createMemoryLogger() });
  return { store, ctx, log: new SessionLog(ctx, store) };
}
const a = await node("tail"), b = await node("tail");
await a.log.create({ session_id: "t" });
const controller = new AbortController();
let waiting: ((at: number) => void) | undefined;
const tail = (async () => {
  for await (const _ of b.log.stream("t", { from_seq: 2, signal: controller.signal })) {
    waiting?.(performance.now());
  }
})();
const fromStart: number[] = [];
const fromDurable: number[] = [];
for (let i = 0; i < TAIL_SAMPLES; i++) {
  const seen = new Promise<number>((resolve) => waiting = resolve);
  const started = performance.now();
  await a.log.append("t", { type: "assistant/chunk", payload: chunkPayload });
  const durable = performance.now();
  const at = await seen;
  fromStart.push(at - started);
  fromDurable.push(at - durable);
}
controller.abort();
await tail;
for (const n of [a, b]) {
  await n.ctx.dispose();
  await n.store.close();
}
const pct = (values: number[], p: number): string => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(2);
};
console.log(
  `  cross-node tail (${TAIL_SAMPLES} events, one at a time): append acknowledged on A to yielded on B: p50 ` +
    `${pct(fromDurable, 0.5)} ms, p99 ${
      pct(fromDurable, 0.99)
    } ms (target p99 < 20 ms); append called on A to ` +
    `yielded on B: p50 ${pct(fromStart, 0.5)} ms, p99 ${pct(fromStart, 0.99)} ms`,
);
lane.cluster.destroy();
