// deno-lint-ignore-file no-console
/**
 * Rehydration of an evicted agent whose session holds 10k events, on SQLite, side by side in one run with the
 * baseline of reading the same session's events (the store's read of all 10k, and the raw `node:sqlite` SELECT of
 * the same rows). Paired rounds, order rotated; prints medians and ratios (target: rehydration under 50 ms p50).
 *
 * Run: deno run -A bench/agent_rehydration.ts [--quick]
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { type SessionEvent, SessionStoreKey } from "@terret/core";
import { createAgentStack } from "@terret/core/testing";

const quick = Deno.args.includes("--quick");
const EVENTS = 10_000;
const ROUNDS = quick ? 9 : 31;
const ID = "long-lived";

const dir = await Deno.makeTempDir({ prefix: "terret-bench-rehydrate-" });
const path = `${dir}/sessions.db`;

/** A realistic 10k-event session: turns of a durable message, its claim, streamed chunks, a tool call. */
function session(): SessionEvent[] {
  const events: SessionEvent[] = [];
  const at = new Date(0).toISOString();
  const push = (type: string, payload: unknown): void => {
    events.push({
      id: crypto.randomUUID(),
      session_id: ID,
      seq: events.length + 1,
      at,
      type,
      payload,
      parent_id: null,
    });
  };
  push("session/created", { meta: { agent_id: ID } });
  let turn = 0;
  while (events.length < EVENTS - 20) {
    turn++;
    push("input/queued", { kind: "message", content: `Question ${turn}`, wake: true });
    const queued = events.length;
    push("turn/start", { agent_id: ID });
    push("step/start", { step: 1 });
    push("user/message", { content: `Question ${turn}`, queued_seq: queued });
    for (let i = 0; i < 10; i++) push("assistant/chunk", { kind: "text", text: `part ${i} ` });
    push("assistant/message", { parts: [{ type: "text", text: `Answer ${turn}` }] });
    push("step/end", {
      step: 1,
      usage: { input_tokens: 100, output_tokens: 20 },
      finish_reason: "stop",
    });
    push("turn/end", { status: "completed" });
  }
  return events;
}

try {
  const stack = await createAgentStack({ sqlitePath: path });
  const events = session();
  await stack.ctx.get(SessionStoreKey).importSession(events);
  const raw = new DatabaseSync(path, { readOnly: true });
  const select = raw.prepare("SELECT * FROM session_events WHERE session_id = ? ORDER BY seq");
  const cases: Record<string, () => Promise<void>> = {
    "rehydrate (ensure after eviction)": async () => {
      await stack.agents.ensure(ID);
      await stack.agents.disposeAgent(ID);
    },
    "store read of the 10k events": async () => {
      await stack.sessions.read(ID);
    },
    "raw node:sqlite SELECT of the rows": () => {
      select.all(ID);
      return Promise.resolve();
    },
  };
  const names = Object.keys(cases);
  const times = new Map<string, number[]>(names.map((name) => [name, []]));
  for (const name of names) await cases[name]!(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const name of order) {
      const start = performance.now();
      await cases[name]!();
      times.get(name)!.push(performance.now() - start);
    }
  }
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[list.length >> 1]!;
  const baseline = median(times.get("raw node:sqlite SELECT of the rows")!);
  console.log(
    `agent with ${events.length} events, SQLite, ${ROUNDS} paired rounds (order rotated)`,
  );
  for (const name of names) {
    const ms = median(times.get(name)!);
    console.log(
      `${name.padEnd(38)} ${ms.toFixed(2).padStart(8)} ms p50   ${
        (ms / baseline).toFixed(2)
      }x raw SELECT`,
    );
  }
  const rehydrate = median(times.get("rehydrate (ensure after eviction)")!);
  console.log(
    `target: rehydration under 50 ms p50 -> ${(rehydrate / 50).toFixed(3)} of the target`,
  );
  raw.close();
  await stack.dispose();
} finally {
  await Deno.remove(dir, { recursive: true });
}
