// deno-lint-ignore-file no-console
/**
 * Session store benchmark, in one run, side by side with the floors (raw `node:sqlite` and raw file appends of the
 * same bytes): single-writer appends per second (one event per transaction), 100 agents streaming chunks
 * concurrently (group commit), and the replay of a 100k-event session. Prints the figures, the ratios against the
 * issue's targets, and how long each group commit blocked the event loop.
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
const ROUNDS = quick ? 1 : 3;

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

function rawDb(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec(
    `CREATE TABLE IF NOT EXISTS session_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
    id TEXT NOT NULL, at TEXT NOT NULL, type TEXT NOT NULL, parent_id TEXT, payload TEXT NOT NULL,
    UNIQUE (session_id, seq))`,
  );
  return db;
}

function rawSqliteInserts(n: number, perTxn: number, sessions: number): number {
  const db = rawDb(fresh("raw.db"));
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

function best(rates: number[]): number {
  return Math.max(...rates);
}

async function rounds<T>(fn: () => Promise<T> | T): Promise<T[]> {
  const out: T[] = [];
  for (let r = 0; r < ROUNDS; r++) out.push(await fn());
  return out;
}

const fmt = (n: number): string => Math.round(n).toLocaleString("en-US").padStart(10);
const ms = (n: number): string => `${n.toFixed(1).padStart(8)} ms`;
const pct = (n: number): string => `${(n * 100).toFixed(0)}%`;

console.log(`session store benchmark (${quick ? "quick" : "full"}; best of ${ROUNDS} rounds)`);

// 1. Single writer, one event per transaction.
// Raw and store rounds alternate, so drift in the machine's load hits both alike.
const rawSqliteRuns: number[] = [], rawFileRuns: number[] = [];
const sqliteSingle: [number, StoreStats][] = [], jsonlSingle: [number, StoreStats][] = [];
for (let r = 0; r < ROUNDS + 2; r++) {
  rawSqliteRuns.push(rawSqliteInserts(SINGLE, 1, 1));
  sqliteSingle.push(
    await storeSingle(() => SqliteSessionStore.open({ path: fresh("single.db") }), SINGLE),
  );
  rawFileRuns.push(rawFileAppends(SINGLE));
  jsonlSingle.push(
    await storeSingle(() => JsonlSessionStore.open({ dir: fresh("single-jsonl") }), SINGLE),
  );
}
const rawSqlite1 = best(rawSqliteRuns);
const rawFile1 = best(rawFileRuns);
const sqlite1 = best(sqliteSingle.map(([rate]) => rate));
const jsonl1 = best(jsonlSingle.map(([rate]) => rate));
console.log(`\n1. single writer, one event per transaction (${SINGLE} appends, each awaited)`);
console.log(`   raw node:sqlite insert+commit   ${fmt(rawSqlite1)} /s`);
console.log(
  `   SqliteSessionStore via sessions ${fmt(sqlite1)} /s   = ${
    pct(sqlite1 / rawSqlite1)
  } of raw (target >= 80%)`,
);
console.log(`   raw file append (writeSync)     ${fmt(rawFile1)} /s`);
console.log(
  `   JsonlSessionStore via sessions  ${fmt(jsonl1)} /s   = ${pct(jsonl1 / rawFile1)} of raw`,
);

// 2. 100 agents streaming chunks concurrently.
const rawSqlite100 = best(await rounds(() => rawSqliteInserts(AGENTS * PER_AGENT, AGENTS, AGENTS)));
const rawSqlite1000 = best(await rounds(() => rawSqliteInserts(AGENTS * PER_AGENT, 1000, 1)));
const sqliteAgents = await rounds(() =>
  storeAgents(() => SqliteSessionStore.open({ path: fresh("agents.db") }))
);
const jsonlAgents = await rounds(() =>
  storeAgents(() => JsonlSessionStore.open({ dir: fresh("agents-jsonl") }))
);
console.log(
  `\n2. ${AGENTS} agents streaming chunks concurrently (${
    AGENTS * PER_AGENT
  } appends, each agent awaits each)`,
);
console.log(`   raw node:sqlite, 1000 rows/txn, 1 session       ${fmt(rawSqlite1000)} /s`);
console.log(
  `   raw node:sqlite, ${AGENTS} rows/txn, ${AGENTS} sessions     ${fmt(rawSqlite100)} /s`,
);
for (
  const [name, runs] of [["SqliteSessionStore", sqliteAgents], [
    "JsonlSessionStore ",
    jsonlAgents,
  ]] as const
) {
  const [rate, stats] = runs.reduce((a, b) => (b[0] > a[0] ? b : a));
  const groups = stats.groups - AGENTS;
  console.log(
    `   ${name} via sessions            ${fmt(rate)} /s   = ${
      pct(rate / 50_000)
    } of the 50k/s target; ` +
      `${stats.groups} groups, ${
        (stats.events / stats.groups).toFixed(1)
      } events/group (max ${stats.max_group_events}); ` +
      `loop blocked per group: mean ${(stats.total_block_ms / stats.groups).toFixed(2)} ms, max ${
        stats.max_block_ms.toFixed(2)
      } ms`,
  );
  void groups;
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

function timed(fn: () => unknown): number {
  const started = performance.now();
  const result = fn();
  void result;
  return performance.now() - started;
}
async function timedAsync(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}
const raw = new DatabaseSync(replayDb);
const select = raw.prepare(
  "SELECT seq, id, at, type, parent_id, payload FROM session_events WHERE session_id = ? AND seq >= ? ORDER BY seq",
);
const rawAll = Math.min(...await rounds(() => timed(() => select.all("replay", 1))));
const rawAllParse = Math.min(
  ...await rounds(() =>
    timed(() =>
      select.all("replay", 1).map((row) => ({ ...row, payload: JSON.parse(row.payload as string) }))
    )
  ),
);
raw.close();
const sqliteStore = SqliteSessionStore.open({ path: replayDb });
const sqliteReplay = Math.min(...await rounds(() => timedAsync(() => sqliteStore.read("replay"))));
await sqliteStore.close();
const file = join(replayDir, "replay.jsonl");
const rawFile = Math.min(
  ...await rounds(() =>
    timedAsync(async () => {
      const text = new TextDecoder().decode(await Deno.readFile(file));
      return text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l));
    })
  ),
);
const jsonlStore = JsonlSessionStore.open({ dir: replayDir });
const jsonlReplay = Math.min(...await rounds(() => timedAsync(() => jsonlStore.read("replay"))));
await jsonlStore.close();
console.log(`\n3. replay of a ${REPLAY.toLocaleString("en-US")}-event session`);
console.log(`   raw node:sqlite all()                 ${ms(rawAll)}`);
console.log(`   raw node:sqlite all() + JSON.parse    ${ms(rawAllParse)}`);
console.log(
  `   SqliteSessionStore.read               ${ms(sqliteReplay)}   = ${
    (sqliteReplay / rawAll).toFixed(2)
  }x raw all() (target <= 1.5x), ${(sqliteReplay / rawAllParse).toFixed(2)}x all()+parse`,
);
console.log(`   raw file read + split + JSON.parse    ${ms(rawFile)}`);
console.log(
  `   JsonlSessionStore.read                ${ms(jsonlReplay)}   = ${
    (jsonlReplay / rawFile).toFixed(2)
  }x raw`,
);

await Deno.remove(dir, { recursive: true });
