// deno-lint-ignore-file no-console
/**
 * What the approvals gate costs a turn when a permission rule decides: the same 3-step turn (a Bash call, another,
 * a text answer) through the whole core stack (SQLite store, every event durable; sessions; tools and the allow
 * list; prompt; agents; the default loop) with the in-process scripted model, in two harnesses:
 *
 * - `never` (the baseline): the tool's approval is `never`, no approvals row is consulted;
 * - `policy`: the tool's approval is `policy` and an approvals row whose rule `Bash(npm test:*)` admits each call
 *   (the rule book, the Bash command reader and the session's approval projection run on every call).
 *
 * The model answers in-process (no HTTP), so the denominator is the harness's own per-step cost and the ratio is
 * the strictest one. Both stacks are mounted and warmed up in the same process; then, in paired rounds (the order
 * rotated each round), each runs TURNS fresh agents sequentially; the figure is the median of per-round ratios of
 * per-step time.
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
const TURNS = QUICK ? 10 : 20;
const WARM = QUICK ? 50 : 200;
const ROUNDS = QUICK ? 11 : 41;
const STEPS = 3;

type Harness = "never" | "policy";

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
    ...(harness === "policy" ? { approvals: { allow: ["Bash(npm test:*)"] } } : {}),
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
  never: await mount("never", dir, total),
  policy: await mount("policy", dir, total),
};
try {
  for (const harness of ["never", "policy"] as const) await turns(stacks[harness], "warm", WARM);
  const perStep: Record<Harness, number[]> = { never: [], policy: [] };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order: Harness[] = round % 2 === 0 ? ["never", "policy"] : ["policy", "never"];
    const got: Partial<Record<Harness, number>> = {};
    for (const harness of order) got[harness] = await turns(stacks[harness], `r${round}`, TURNS);
    perStep.never.push(got.never!);
    perStep.policy.push(got.policy!);
    ratios.push(got.policy! / got.never!);
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
  console.log(`  never  (baseline): median ${median(perStep.never).toFixed(1)} µs/step`);
  console.log(`  policy (rule):     median ${median(perStep.policy).toFixed(1)} µs/step`);
  console.log(
    `  ratio policy/never per step: median ${
      median(ratios).toFixed(3)
    } over ${ROUNDS} paired rounds ` +
      "(budget 1.050)",
  );
} finally {
  await stacks.never.dispose();
  await stacks.policy.dispose();
  await Deno.remove(dir, { recursive: true });
}
