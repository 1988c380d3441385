// deno-lint-ignore-file no-console
/**
 * What the approvals gate costs a turn when a permission rule decides: the same 3-step turn (a Bash call, another,
 * a text answer) through the whole core stack (SQLite store, every event durable; sessions; tools and the allow
 * list; prompt; agents; the default loop) with the in-process scripted model, in three harnesses:
 *
 * - `never` (the baseline): the host of the base bundle, with the approvals row and its rule `Bash(npm test:*)`
 *   mounted, and the tool's approval `never`, so the row is never consulted: the same turn, asking nothing;
 * - `policy`: the same host, the tool's approval `policy`, so the rule admits each call (the rule book, the Bash
 *   command reader and the session's approval projection run on every call);
 * - `bare` (for reference): no approvals row at all, the tool's approval `never`.
 *
 * The model answers in-process (no HTTP), so the denominator is the harness's own per-step cost and the ratio is
 * the strictest one. The stacks are mounted and warmed up in the same process; then, in paired rounds (the order
 * rotated each round), each runs TURNS fresh agents sequentially. Short rounds, many of them: the figure is the
 * median of per-round ratios of per-step time, so a pause (GC, a busy disk) that hits one round moves one ratio,
 * not the figure.
 *
 * Run: deno run -A bench/approvals_overhead.ts [--quick]
 *
 * @module
 */
import {
  type AgentStack,
  createAgentStack,
  scriptedAdapter,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { z } from "zod";

const QUICK = Deno.args.includes("--quick");
const TURNS = QUICK ? 2 : 4;
const WARM = QUICK ? 50 : 400;
const ROUNDS = QUICK ? 41 : 201;
const STEPS = 3;

type Harness = "bare" | "never" | "policy";
const HARNESSES: readonly Harness[] = ["bare", "never", "policy"];

function script(turns: number) {
  const replies = [];
  for (let i = 0; i < turns; i++) {
    replies.push(
      toolCallsReply([{ id: `c${i}a`, name: "Bash", args: { command: "npm test --silent" } }]),
      toolCallsReply([{ id: `c${i}b`, name: "Bash", args: { command: "npm test -- --grep x" } }]),
      textReply("All green."),
    );
  }
  return scriptedAdapter(replies);
}

async function mount(harness: Harness, dir: string, turns: number): Promise<AgentStack> {
  const stack = await createAgentStack({
    adapter: script(turns),
    allow: ["Bash"],
    sqlitePath: `${dir}/${harness}.db`,
    maxAgents: turns + 1,
    context: { mode: "production" },
    ...(harness !== "bare" ? { approvals: { allow: ["Bash(npm test:*)"] } } : {}),
  });
  stack.tools.register(stack.ctx, {
    name: "Bash",
    description: "Runs a command",
    parameters: z.strictObject({ command: z.string() }),
    mutating: true,
    concurrency: "serial",
    approval: harness === "policy" ? "policy" : "never",
    handler: ({ command }) => `ran ${command}`,
  });
  return stack;
}

/** Runs `count` turns on fresh agents; returns the wall time per step in microseconds. */
async function turns(stack: AgentStack, prefix: string, count: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < count; i++) {
    const agent = await stack.agents.ensure(`${prefix}-${i}`);
    const started = performance.now();
    agent.send("Run the tests");
    await agent.idle();
    total += performance.now() - started;
    if (agent.status !== "idle") throw new Error(`turn ${prefix}-${i} ended ${agent.status}`);
  }
  return total / count / STEPS * 1000;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const dir = await Deno.makeTempDir({ prefix: "terret-bench-approvals-" });
const total = WARM + ROUNDS * TURNS;
const stacks = {
  bare: await mount("bare", dir, total),
  never: await mount("never", dir, total),
  policy: await mount("policy", dir, total),
};
try {
  for (const harness of HARNESSES) await turns(stacks[harness], "warm", WARM);
  const perStep: Record<Harness, number[]> = { bare: [], never: [], policy: [] };
  const ratios: number[] = [];
  const bareRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Every harness takes every position equally often, and policy runs before and after never equally often.
    const shift = round % HARNESSES.length;
    const rotated = [...HARNESSES.slice(shift), ...HARNESSES.slice(0, shift)];
    const order = Math.floor(round / HARNESSES.length) % 2 === 0 ? rotated : rotated.reverse();
    const got: Partial<Record<Harness, number>> = {};
    for (const harness of order) got[harness] = await turns(stacks[harness], `r${round}`, TURNS);
    for (const harness of HARNESSES) perStep[harness].push(got[harness]!);
    ratios.push(got.policy! / got.never!);
    bareRatios.push(got.policy! / got.bare!);
  }
  const events = await stacks.policy.sessions.read("r0-0");
  if (events.filter((event) => event.type === "tool/result").length !== 2) {
    throw new Error("no tool ran");
  }
  if (events.some((event) => event.type.startsWith("approval/"))) {
    throw new Error("a rule-decided call was logged as an approval request");
  }
  console.log(
    `approvals overhead: ${ROUNDS} rounds of ${TURNS} turns x ${STEPS} steps per harness (order rotated)`,
  );
  console.log(`  bare   (no row):   median ${median(perStep.bare).toFixed(1)} µs/step`);
  console.log(`  never  (baseline): median ${median(perStep.never).toFixed(1)} µs/step`);
  console.log(`  policy (rule):     median ${median(perStep.policy).toFixed(1)} µs/step`);
  console.log(
    `  ratio policy/never per step: median ${
      median(ratios).toFixed(3)
    } over ${ROUNDS} paired rounds ` +
      "(budget 1.050)",
  );
  console.log(
    `  ratio policy/bare per step (no approvals row in the reference): median ${
      median(bareRatios).toFixed(3)
    }`,
  );
} finally {
  for (const harness of HARNESSES) await stacks[harness].dispose();
  await Deno.remove(dir, { recursive: true });
}
