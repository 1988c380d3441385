// deno-lint-ignore-file no-console
/**
 * Session store benchmark, in one run, side by side with the floors (raw `node:sqlite` and raw file appends of the
 * same bytes): single-writer appends per second (one event per transaction), 100 agents streaming chunks
 * concurrently (group commit), the replay of a 100k-event session, a typed read of a rare type from it (its
 * time and the longest event-loop stall it causes), and a paged replay of the JSONL session. Prints the figures, the ratios against the
 * issue's targets, and how long each group commit blocked the event loop. The SQLite rows run under both
 * `synchronous` settings: `normal` (the default: WAL, safe against a process crash, the latest commits may roll back
 * on power loss) and `full` (an fsync per commit: safe against power loss), each against a raw floor with the same
 * pragma.
 *
 * Every section runs in rounds, the cases in an order rotated per round; figures are medians over rounds and ratios
 * medians of per-round ratios (the load of other processes moves both sides of a round together).
 *
 * Run: deno run -A bench/sessions_store.ts [--quick]
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { createContext, createMemoryLogger } from "@terret/hames";
import { JsonlSessionStore, SqliteSessionStore, type StoreStats } from "@terret/core/sessions";
import { SessionLog, type SessionStore } from "@terret/core";

const quick = Deno.args.includes("--quick");
const SINGLE = quick ? 2_000 : 10_000;
const AGENTS = 100;
const PER_AGENT = quick ? 50 : 300;
const REPLAY = quick ? 20_000 : 100_000;
const ROUNDS = quick ? 3 : 7;
/** Appends per round for the one-event-per-transaction rows under `synchronous: full` (an fsync each). */
const SINGLE_FULL = quick ? 300 : 1_500;

const dir = await Deno.makeTempDir({ prefix: "terret-bench-" });
const chunkPayload = { kind: "text", text: "hello world, this is one streamed chunk of text" };
const payloadJson = JSON.stringify(chunkPayload);
const encoder = new TextEncoder();
let fileNo = 0;
const fresh = (name: string): string => join(dir, `${name}-${fileNo++}`);

function line(session: string, seq: number): string {
  return `{"id":"${crypto.randomUUID()}","session_id":"${session}","seq":${seq},"at":"${
    new Date().toISOString()
  }","type":"assistant/chunk","payload":${payloadJson},"parent_id":null}\n`;
}

type Sync = "normal" | "full";

function rawDb(path: string, sync: Sync): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec(
    `PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = ${sync.toUpperCase()}`,
  );
  db.exec(
    `CREATE TABLE IF NOT EXISTS session_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
    id TEXT NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, parent_id TEXT, payload TEXT NOT NULL,
    UNIQUE (session_id, seq))`,
  );
  return db;
}

function rawSqliteInserts(
  n: number,
  perTxn: number,
  sessions: number,
  sync: Sync = "normal",
): number {
  const db = rawDb(fresh("raw.db"), sync);
  const insert = db.prepare("INSERT INTO session_events VALUES (?, ?, ?, ?, ?, ?, ?)");
  const started = performance.now();
  for (let done = 0; done < n;) {
    db.exec("BEGIN IMMEDIATE");
    for (let k = 0; k < perTxn && done < n; k++, done++) {
      const s = done % sessions;
      insert.run(
        `agent-${s}`,
        Math.floor(done / sessions) + 1,
        crypto.randomUUID(),
        new Date().toISOString(),
        "assistant/chunk",
        null,
        payloadJson,
      );
    }
    db.exec("COMMIT");
  }
  const rate = n / ((performance.now() - started) / 1000);
  db.close();
  return rate;
}

function rawFileAppends(n: number): number {
  const file = Deno.openSync(fresh("raw.jsonl"), { write: true, create: true });
  const started = performance.now();
  for (let i = 1; i <= n; i++) {
    const bytes = encoder.encode(line("s", i));
    let offset = 0;
    while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
  }
  const rate = n / ((performance.now() - started) / 1000);
  file.close();
  return rate;
}

async function withLog<T>(
  store: SessionStore,
  body: (log: SessionLog) => Promise<T>,
): Promise<[T, StoreStats]> {
  const ctx = createContext({ mode: "production", logger: createMemoryLogger() });
  try {
    const result = await body(new SessionLog(ctx, store));
    return [result, store.stats()];
  } finally {
    await ctx.dispose();
    await store.close();
  }
}

async function storeSingle(open: () => SessionStore, n: number): Promise<[number, StoreStats]> {
  return await withLog(open(), async (log) => {
    await log.create({ session_id: "s" });
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      await log.append("s", { type: "assistant/chunk", payload: chunkPayload });
    }
    return n / ((performance.now() - started) / 1000);
  });
}

async function storeAgents(open: () => SessionStore): Promise<[number, StoreStats]> {
  return await withLog(open(), async (log) => {
    const ids = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
    await Promise.all(ids.map((id) => log.create({ session_id: id })));
    const started = performance.now();
    await Promise.all(ids.map(async (id) => {
      for (let i = 0; i < PER_AGENT; i++) {
        await log.append(id, { type: "assistant/chunk", payload: chunkPayload });
      }
    }));
    return (AGENTS * PER_AGENT) / ((performance.now() - started) / 1000);
  });
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Runs every case once per round, the order rotated per round; returns each case's result per round. */
async function paired<T>(
  cases: Record<string, () => Promise<T> | T>,
): Promise<Record<string, T[]>> {
  const names = Object.keys(cases);
  const out: Record<string, T[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length]!;
      out[name]!.push(await cases[name]!());
    }
  }
  return out;
}

/** The median over rounds of `a[round] / b[round]`. */
const ratio = (a: readonly number[], b: readonly number[]): number =>
  median(a.map((value, round) => value / b[round]!));

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US").padStart(10);
const ms = (n: number): string => `${n.toFixed(1).padStart(8)} ms`;
const pct = (n: number): string => `${(n * 100).toFixed(0)}%`;
const rates = (runs: readonly [number, StoreStats][]): number[] => runs.map(([rate]) => rate);

console.log(
  `session store benchmark (${
    quick ? "quick" : "full"
  }; medians of ${ROUNDS} rounds, order rotated per ` +
    "round; ratios are medians of per-round ratios)",
);

// 1. Single writer, one event per transaction.
const single = await paired<number | [number, StoreStats]>({
  rawSqlite: () => rawSqliteInserts(SINGLE, 1, 1),
  sqlite: () => storeSingle(() => SqliteSessionStore.open({ path: fresh("single.db") }), SINGLE),
  rawFile: () => rawFileAppends(SINGLE),
  jsonl: () => storeSingle(() => JsonlSessionStore.open({ dir: fresh("single-jsonl") }), SINGLE),
  rawSqliteFull: () => rawSqliteInserts(SINGLE_FULL, 1, 1, "full"),
  sqliteFull: () =>
    storeSingle(
      () => SqliteSessionStore.open({ path: fresh("single-full.db"), synchronous: "full" }),
      SINGLE_FULL,
    ),
});
const num = (name: string): number[] =>
  single[name]!.map((value) => typeof value === "number" ? value : value[0]);
console.log(`\n1. single writer, one event per transaction (each append awaited)`);
for (
  const [label, raw, store, target] of [
    [`synchronous: normal (${SINGLE} appends)`, "rawSqlite", "sqlite", " (target >= 80%)"],
    [`synchronous: full (${SINGLE_FULL} appends)`, "rawSqliteFull", "sqliteFull", ""],
  ] as const
) {
  console.log(`   ${label}`);
  console.log(`     raw node:sqlite insert+commit   ${fmt(median(num(raw)))} /s`);
  console.log(
    `     SqliteSessionStore via sessions ${fmt(median(num(store)))} /s   = ${
      pct(ratio(num(store), num(raw)))
    } of raw${target}`,
  );
}
console.log(`   raw file append (writeSync)       ${fmt(median(num("rawFile")))} /s`);
console.log(
  `   JsonlSessionStore via sessions    ${fmt(median(num("jsonl")))} /s   = ${
    pct(ratio(num("jsonl"), num("rawFile")))
  } of raw`,
);

// 2. 100 agents streaming chunks concurrently.
const agents = await paired<number | [number, StoreStats]>({
  raw100: () => rawSqliteInserts(AGENTS * PER_AGENT, AGENTS, AGENTS),
  raw100Full: () => rawSqliteInserts(AGENTS * PER_AGENT, AGENTS, AGENTS, "full"),
  raw1000: () => rawSqliteInserts(AGENTS * PER_AGENT, 1000, 1),
  sqlite: () => storeAgents(() => SqliteSessionStore.open({ path: fresh("agents.db") })),
  sqliteFull: () =>
    storeAgents(() =>
      SqliteSessionStore.open({ path: fresh("agents-full.db"), synchronous: "full" })
    ),
  jsonl: () => storeAgents(() => JsonlSessionStore.open({ dir: fresh("agents-jsonl") })),
});
const agentRates = (name: string): number[] =>
  agents[name]!.map((value) => typeof value === "number" ? value : value[0]);
console.log(
  `\n2. ${AGENTS} agents streaming chunks concurrently (${
    AGENTS * PER_AGENT
  } appends, each agent awaits each)`,
);
console.log(
  `   raw node:sqlite, 1000 rows/txn, 1 session              ${
    fmt(median(agentRates("raw1000")))
  } /s`,
);
console.log(
  `   raw node:sqlite, ${AGENTS} rows/txn, ${AGENTS} sessions (normal)   ${
    fmt(median(agentRates("raw100")))
  } /s`,
);
console.log(
  `   raw node:sqlite, ${AGENTS} rows/txn, ${AGENTS} sessions (full)     ${
    fmt(median(agentRates("raw100Full")))
  } /s`,
);
for (
  const [name, key, raw] of [
    ["SqliteSessionStore (normal)", "sqlite", "raw100"],
    ["SqliteSessionStore (full)  ", "sqliteFull", "raw100Full"],
    ["JsonlSessionStore          ", "jsonl", undefined],
  ] as const
) {
  const runs = agents[key]! as [number, StoreStats][];
  const values = rates(runs);
  const stats = runs[values.indexOf(median(values))]?.[1] ?? runs[0]![1];
  console.log(
    `   ${name} via sessions  ${fmt(median(values))} /s   = ${
      pct(median(values) / 50_000)
    } of the 50k/s target${
      raw === undefined ? "" : `, ${pct(ratio(values, agentRates(raw)))} of raw (same pragma)`
    }; ${stats.groups} groups, ${
      (stats.events / stats.groups).toFixed(1)
    } events/group (max ${stats.max_group_events}); loop blocked per group: mean ${
      (stats.total_block_ms / stats.groups).toFixed(2)
    } ms, max ${stats.max_block_ms.toFixed(2)} ms`,
  );
}

// 3. Replay of a 100k-event session.
async function fill(store: SessionStore): Promise<void> {
  await withLog(store, async (log) => {
    await log.create({ session_id: "replay" });
    for (let i = 1; i < REPLAY; i += 1000) {
      const n = Math.min(1000, REPLAY - i);
      await Promise.all(
        Array.from(
          { length: n },
          () => log.append("replay", { type: "assistant/chunk", payload: chunkPayload }),
        ),
      );
    }
  });
}
const replayDb = fresh("replay.db");
await fill(SqliteSessionStore.open({ path: replayDb }));
const replayDir = fresh("replay-jsonl");
await fill(JsonlSessionStore.open({ dir: replayDir }));

async function timed(fn: () => unknown): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}
const raw = new DatabaseSync(replayDb);
const select = raw.prepare(
  "SELECT seq, id, at, type, parent_id, payload FROM session_events WHERE session_id = ? AND seq >= ? ORDER BY seq",
);
const sqliteStore = SqliteSessionStore.open({ path: replayDb });
const file = join(replayDir, "replay.jsonl");
const jsonlStore = JsonlSessionStore.open({ dir: replayDir });
const replay = await paired<number>({
  rawAll: () => timed(() => select.all("replay", 1)),
  rawAllParse: () =>
    timed(() =>
      select.all("replay", 1).map((row) => ({ ...row, payload: JSON.parse(row.payload as string) }))
    ),
  sqlite: () => timed(() => sqliteStore.read("replay")),
  rawFile: () =>
    timed(async () => {
      const text = new TextDecoder().decode(await Deno.readFile(file));
      return text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
    }),
  jsonl: () => timed(() => jsonlStore.read("replay")),
});
raw.close();
await sqliteStore.close();
await jsonlStore.close();
const r = (name: string): number[] => replay[name]!;
console.log(`\n3. replay of a ${REPLAY.toLocaleString("en-US")}-event session`);
console.log(`   raw node:sqlite all()                 ${ms(median(r("rawAll")))}`);
console.log(`   raw node:sqlite all() + JSON.parse    ${ms(median(r("rawAllParse")))}`);
console.log(
  `   SqliteSessionStore.read               ${ms(median(r("sqlite")))}   = ${
    ratio(r("sqlite"), r("rawAll")).toFixed(2)
  }x raw all() (target <= 1.5x), ${ratio(r("sqlite"), r("rawAllParse")).toFixed(2)}x all()+parse`,
);
console.log(`   raw file read + split + JSON.parse    ${ms(median(r("rawFile")))}`);
console.log(
  `   JsonlSessionStore.read                ${ms(median(r("jsonl")))}   = ${
    ratio(r("jsonl"), r("rawFile")).toFixed(2)
  }x raw`,
);

// 4. A typed read of a rare type from a long session, of a type outside the store's index of sparse types (those are
// sought through the index: bench/boot_sweeps.ts): what the approvals state's read of tool events does. The floor is
// one raw query, one synchronous scan of the whole session; the store scans a page of seqs per query and lets the
// event loop run between pages. Each case is timed whole, and a macrotask chain running beside it
// records the longest the loop went without a turn.
const rareDb = fresh("rare.db");
{
  const store = SqliteSessionStore.open({ path: rareDb });
  const at = new Date(0).toISOString();
  await store.importSession(Array.from({ length: REPLAY }, (_, i) => ({
    id: crypto.randomUUID(),
    session_id: "rare",
    seq: i + 1,
    at,
    type: (i + 1) % 1000 === 0 ? "x/rare" : "assistant/chunk",
    payload: chunkPayload,
    parent_id: null,
  })));
  await store.close();
}
/** Runs `fn` with a `setImmediate` chain beside it: [its wall ms, the longest gap between the chain's turns]. */
async function stalled(fn: () => unknown): Promise<[number, number]> {
  let last = performance.now();
  let worst = 0;
  let running = true;
  const turn = (): void => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  last = started;
  worst = 0;
  await fn();
  const wall = performance.now() - started;
  await new Promise((resolve) => setImmediate(resolve));
  running = false;
  return [wall, worst];
}
const rareRaw = new DatabaseSync(rareDb);
const typed = rareRaw.prepare(
  "SELECT seq, id, at, type, parent_id, payload FROM session_events WHERE session_id = ? AND seq >= ? " +
    "AND type IN ('x/rare') ORDER BY seq",
);
const rareStore = SqliteSessionStore.open({ path: rareDb });
const rare = await paired<[number, number]>({
  raw: () =>
    stalled(async () => {
      await Promise.resolve();
      typed.all("rare", 1).map((row) => ({ ...row, payload: JSON.parse(row.payload as string) }));
    }),
  sqlite: () => stalled(() => rareStore.read("rare", { types: ["x/rare"] })),
});
rareRaw.close();
await rareStore.close();
const wall = (name: string): number[] => rare[name]!.map(([ms]) => ms);
const worst = (name: string): number[] => rare[name]!.map(([, gap]) => gap);
console.log(
  `\n4. a typed read of a rare type (1 event in 1,000) from a ${
    REPLAY.toLocaleString("en-US")
  }-event session`,
);
console.log(
  `   raw node:sqlite all() + JSON.parse    ${ms(median(wall("raw")))}, the loop stalled up to ${
    ms(median(worst("raw")))
  }`,
);
console.log(
  `   SqliteSessionStore.read               ${ms(median(wall("sqlite")))}, the loop stalled up to ${
    ms(median(worst("sqlite")))
  }   = ${ratio(wall("sqlite"), wall("raw")).toFixed(2)}x raw time, ${
    ratio(worst("sqlite"), worst("raw")).toFixed(3)
  }x raw stall`,
);

// 5. A paged replay of the JSONL session, as `sessions.streamJson` pulls it (pages of 1,000 events as stored JSON):
// each page reads its own lines through the store's line index. The floor is one plain read of the whole file (read,
// split, JSON.parse each line). Time and the longest loop stall, as in section 4.
const pagedStore = JsonlSessionStore.open({ dir: replayDir });
const paged = await paired<[number, number]>({
  rawFile: () =>
    stalled(async () => {
      const text = new TextDecoder().decode(await Deno.readFile(file));
      text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
    }),
  jsonl: () =>
    stalled(async () => {
      for (let from = 1;;) {
        const page = await pagedStore.readJson("replay", { from_seq: from, limit: 1000 });
        if (page.length === 0) break;
        from = page.at(-1)!.seq + 1;
      }
    }),
});
await pagedStore.close();
const pagedWall = (name: string): number[] => paged[name]!.map(([ms]) => ms);
const pagedWorst = (name: string): number[] => paged[name]!.map(([, gap]) => gap);
console.log(
  `\n5. a paged replay (readJson, 1,000 events a page) of the ${
    REPLAY.toLocaleString("en-US")
  }-event JSONL session`,
);
console.log(
  `   raw file read + split + JSON.parse    ${
    ms(median(pagedWall("rawFile")))
  }, the loop stalled up to ${ms(median(pagedWorst("rawFile")))}`,
);
console.log(
  `   JsonlSessionStore.readJson pages      ${
    ms(median(pagedWall("jsonl")))
  }, the loop stalled up to ${ms(median(pagedWorst("jsonl")))}   = ${
    ratio(pagedWall("jsonl"), pagedWall("rawFile")).toFixed(2)
  }x raw time, ${ratio(pagedWorst("jsonl"), pagedWorst("rawFile")).toFixed(3)}x raw stall`,
);

// 6. What the index of sparse types costs appends: the store appending three-step turns as the loop writes them (seven
// transactions a turn, its input/queued and user/message sparse), against the same store on a file without the index
// (dropped after open: the store keeps using it as it would any file). Each round appends TURNS fresh turns per case.
const TURNS = quick ? 100 : 300;
const TURN_GROUPS: readonly (readonly [string, unknown][])[] = [
  [["input/queued", { kind: "message", content: "Do the work", wake: true }]],
  [["turn/start", {}], ["step/start", { step: 1 }], ["user/message", {
    content: "Do the work",
    queued_seq: 1,
  }]],
  [["assistant/message", { parts: [{ type: "tool_call", id: "c1", name: "work", args: {} }] }], [
    "tool/call",
    { id: "c1", name: "work", args: {} },
  ]],
  [["tool/result", { id: "c1", name: "work", content: "step 1 done", is_error: false }], [
    "step/end",
    { step: 1 },
  ], ["step/start", { step: 2 }]],
  [["assistant/message", { parts: [{ type: "tool_call", id: "c2", name: "work", args: {} }] }], [
    "tool/call",
    { id: "c2", name: "work", args: {} },
  ]],
  [["tool/result", { id: "c2", name: "work", content: "step 2 done", is_error: false }], [
    "step/end",
    { step: 2 },
  ], ["step/start", { step: 3 }]],
  [
    ["assistant/chunk", chunkPayload],
    ["assistant/message", {
      parts: [{ type: "text", text: "All done." }],
    }],
    ["step/end", { step: 3 }],
    ["turn/end", { status: "completed" }],
  ],
];
const indexedPath = fresh("indexed.db");
const plainPath = fresh("plain.db");
const indexed = SqliteSessionStore.open({ path: indexedPath });
const plain = SqliteSessionStore.open({ path: plainPath });
{
  const raw = new DatabaseSync(plainPath);
  raw.exec("DROP INDEX session_events_sparse_v1");
  raw.close();
}
let turnRound = 0;
async function appendTurns(store: SqliteSessionStore): Promise<number> {
  const round = turnRound++;
  const started = performance.now();
  for (let i = 0; i < TURNS; i++) {
    const session = `t${round}-${i}`;
    for (const group of TURN_GROUPS) {
      await Promise.all(group.map(([type, payload]) =>
        store.append({
          id: crypto.randomUUID(),
          session_id: session,
          at: new Date(0).toISOString(),
          type,
          payload,
          payload_json: JSON.stringify(payload),
          parent_id: null,
          expect: type === "input/queued" ? "new" : "existing",
        })
      ));
    }
  }
  return (performance.now() - started) * 1000 / TURNS;
}
const turnCost = await paired<number>({
  plain: () => appendTurns(plain),
  indexed: () => appendTurns(indexed),
});
await indexed.close();
await plain.close();
console.log(
  `\n6. appending three-step turns (seven transactions, two sparse events each), ${TURNS} a round`,
);
console.log(
  `   without the sparse index              ${
    median(turnCost.plain!).toFixed(0).padStart(8)
  } µs a turn`,
);
console.log(
  `   with it (the default)                 ${
    median(turnCost.indexed!).toFixed(0).padStart(8)
  } µs a turn   = ${ratio(turnCost.indexed!, turnCost.plain!).toFixed(3)}x`,
);

await Deno.remove(dir, { recursive: true });
