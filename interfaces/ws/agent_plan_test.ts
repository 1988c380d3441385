/**
 * The plan `GET /v1/agents/{id}` serves: the last successful `TodoWrite` call's todos, found by reading the log back
 * from its head a window at a time, so a long session costs the events since its last plan.
 */
import assert from "node:assert/strict";
import { type RecordedRead, recordReads } from "@terret/core/testing";
import { createContext } from "@terret/hames";
import { SessionLog, type Sessions } from "@terret/core";
import { MemorySessionStore } from "@terret/core/sessions";
import { currentPlan, type PlanItem } from "./agent_plan.ts";

const todos = (label: string) => [
  { content: `${label} one`, status: "completed", activeForm: `Doing ${label} one` },
  { content: `${label} two`, status: "in_progress", activeForm: `Doing ${label} two` },
];

/**
 * A session whose events are `user/message` fillers, except the `TodoWrite` calls and results placed at the seqs
 * given, up to `head`.
 */
async function sessionWith(
  head: number,
  placed: ReadonlyMap<number, [string, unknown]>,
): Promise<SessionLog> {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s" });
  for (let seq = 2; seq <= head; seq++) {
    const [type, payload] = placed.get(seq) ?? ["user/message", { content: `filler ${seq}` }];
    await log.append("s", { type, payload });
  }
  return log;
}

const call = (id: string, label: string): [string, unknown] => [
  "tool/call",
  { id, name: "TodoWrite", args: { todos: todos(label) } },
];
const result = (id: string, isError: boolean): [string, unknown] => [
  "tool/result",
  { id, name: "TodoWrite", content: isError ? "refused" : "ok", is_error: isError },
];

/** The plan as a plain reading of the whole log gives it: the reference. */
async function planOfWholeLog(sessions: Sessions): Promise<readonly PlanItem[] | null> {
  const events = await sessions.read("s", { types: ["tool/call", "tool/result"] });
  const results = events.filter((event) =>
    event.type === "tool/result" &&
    (event.payload as { name: string }).name === "TodoWrite" &&
    (event.payload as { is_error: boolean }).is_error === false
  );
  const last = results.at(-1);
  if (last === undefined) return null;
  const id = (last.payload as { id: string }).id;
  const found = events.find((event) =>
    event.type === "tool/call" && (event.payload as { id: string }).id === id
  );
  const list = (found?.payload as { args: { todos: PlanItem[] } } | undefined)?.args.todos;
  return list === undefined ? null : list;
}

/** The seq ranges of the recorded reads (`to` is Infinity for a read up to the head). */
const ranges = (reads: readonly RecordedRead[]): number[][] =>
  reads.map((read) => [read.from, read.to]);

Deno.test("a plan near the head is found in the last window of the log", async () => {
  const log = await sessionWith(
    3000,
    new Map([[2990, call("c1", "near")], [2991, result("c1", false)]]),
  );
  const { sessions, reads } = recordReads(log);
  assert.deepStrictEqual(await currentPlan(sessions, "s"), todos("near"));
  assert.deepStrictEqual(ranges(reads), [[2489, 3000]]);
});

Deno.test("a plan whose call and result sit in different windows, behind a refused one, is still found", async () => {
  // Windows of 512 from head 1030: [519, 1030], [7, 518], [1, 6].
  const log = await sessionWith(
    1030,
    new Map([
      [3, call("c0", "old")],
      [4, result("c0", false)],
      [510, call("c1", "kept")],
      [525, result("c1", false)],
      [1000, call("c2", "refused")],
      [1001, result("c2", true)],
    ]),
  );
  const { sessions, reads } = recordReads(log);
  const plan = await currentPlan(sessions, "s");
  assert.deepStrictEqual(plan, todos("kept"));
  assert.deepStrictEqual(plan, await planOfWholeLog(log));
  assert.deepStrictEqual(ranges(reads), [[519, 1030], [7, 518]]);
});

Deno.test("a session without a successful TodoWrite has no plan, after reading back to its start", async () => {
  const log = await sessionWith(
    700,
    new Map([[100, call("c1", "refused")], [101, result("c1", true)]]),
  );
  const { sessions, reads } = recordReads(log);
  assert.equal(await currentPlan(sessions, "s"), null);
  assert.deepStrictEqual(ranges(reads), [[189, 700], [1, 188]]);
  assert.equal(await currentPlan(log, "unknown"), null);
});
