// deno-lint-ignore-file no-console
/**
 * Compaction's own cost (the summary call excluded: a compactor that answers at once stands in for the model) on a
 * 100k-event SQLite session, side by side with the baseline, a plain read of the same events through the log:
 *
 * - cold: the first compaction of a 100k-event session that was never compacted (it reads every event once);
 * - steady: a compaction after an earlier one (it reads only from the previous `kept_from_seq`).
 *
 * Paired rounds (a fresh fork of the session per round, built outside the timing), order rotated; medians and
 * ratios to the baseline.
 *
 * Run: deno run -A bench/compaction.ts [--quick]
 *
 * @module
 */
import { createContext } from "@terret/hames";
import {
  CompactionKey,
  CompactionService,
  CompactorKey,
  LlmRegistry,
  SessionsKey,
  sessionsPlugin,
  sqliteStorePlugin,
} from "@terret/core";

const QUICK = Deno.args.includes("--quick");
const EVENTS = QUICK ? 20_000 : 100_000;
const ROUNDS = QUICK ? 3 : 5;
const dir = await Deno.makeTempDir({ prefix: "terret-bench-compaction-" });

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

await using ctx = createContext({ mode: "production" });
ctx.plugin(sqliteStorePlugin, { path: `${dir}/bench.db` }, { id: "sessions.store" });
ctx.plugin(sessionsPlugin, {}, { id: "sessions" });
ctx.plugin(LlmRegistry, {}, { id: "llm" });
ctx.provide(CompactorKey, {
  summarize: () =>
    Promise.resolve({ summary: "A summary.", usage: { input_tokens: 1, output_tokens: 1 } }),
});
ctx.plugin(CompactionService, { auto: false, context_window: 8_000, keep: 0.3 }, {
  id: "compaction",
});
await ctx.idle();
const sessions = ctx.get(SessionsKey);
const compaction = ctx.get(CompactionKey);

async function appendTurn(sessionId: string, n: number): Promise<void> {
  const text = `turn ${n}: ${"words of a typical exchange ".repeat(4)}`;
  const appends = [
    { type: "turn/start", payload: { agent_id: "bench" } },
    { type: "step/start", payload: { step: 1 } },
    { type: "user/message", payload: { content: text } },
    { type: "assistant/chunk", payload: { kind: "text", text } },
    { type: "assistant/message", payload: { parts: [{ type: "text", text }] } },
    {
      type: "step/end",
      payload: { step: 1, usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: "stop" },
    },
    { type: "turn/end", payload: { status: "completed" } },
  ];
  await Promise.all(appends.map((input) => sessions.append(sessionId, input)));
}

await sessions.create({ session_id: "source" });
let turns = 0;
while ((await sessions.head("source")) < EVENTS) {
  const burst = [];
  for (let i = 0; i < 50; i++) burst.push(appendTurn("source", ++turns));
  await Promise.all(burst);
}
const head = await sessions.head("source");

const results: Record<"read" | "cold" | "steady", number[]> = { read: [], cold: [], steady: [] };
for (let round = 0; round < ROUNDS; round++) {
  const fork = `fork-${round}`;
  await sessions.fork("source", { boundary_seq: head, session_id: fork });
  const jobs: (["read" | "cold", () => Promise<unknown>])[] = [
    ["read", () => sessions.read(fork)],
    ["cold", () => compaction.compact(fork)],
  ];
  if (round % 2 === 1) jobs.reverse();
  for (const [name, job] of jobs) {
    const started = performance.now();
    await job();
    results[name].push(performance.now() - started);
  }
  await appendTurn(fork, ++turns);
  const started = performance.now();
  const event = await compaction.compact(fork);
  results.steady.push(performance.now() - started);
  if (event === undefined) throw new Error("the steady compaction appended nothing");
}
const base = median(results.read);
console.log(
  `compaction of a ${head.toLocaleString("en-US")}-event SQLite session (median of ${ROUNDS}):`,
);
console.log(`  baseline: read every event   ${base.toFixed(1)} ms  x1.00`);
for (const name of ["cold", "steady"] as const) {
  const ms = median(results[name]);
  console.log(
    `  ${name.padEnd(6)} compaction          ${ms.toFixed(1)} ms  x${(ms / base).toFixed(2)}`,
  );
}
await Deno.remove(dir, { recursive: true });
