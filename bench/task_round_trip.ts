// deno-lint-ignore-file no-console
/**
 * What a `Task` round trip costs beyond the model: the child's creation (its durable session, lineage and policy),
 * its one step, and its disposal, against the baseline, a plain in-process tool call in the same run.
 *
 * Two hosts on the whole core stack (SQLite store, every event durable; sessions; tools and the allow list;
 * prompt; agents; the default loop; the subagents row), each answering from the in-process scripted model (no HTTP,
 * so the model's own time is a few macrotasks per reply):
 *
 * - `plain` (the baseline): a turn whose first step calls `echo` (a handler returning its text), then answers;
 * - `task`: the same turn calling `Task`; the child answers in one step (role `subagent`) and is disposed.
 *
 * A `tools/execute` listener on each host times the call itself (from admission to the handler's result), so the
 * figures are the tool calls' own; the turns are timed too. In paired rounds (the order alternated each round),
 * each host runs TURNS fresh agents (a round's figure is the median of its turns); the figures are medians of
 * per-round ratios.
 *
 * `--memory` runs both hosts on the memory store instead: the harness's own cost, without the durable commits.
 *
 * Run: deno run -A --lock=bench/deno.lock bench/task_round_trip.ts [--quick] [--memory]
 *
 * @module
 */
import { ToolsExecute } from "@terret/core/tools";
import { Llm } from "@terret/core";
import { SubagentsService } from "@terret/core/subagents";
import {
  type AgentStack,
  createAgentStack,
  scriptedAdapter,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { z } from "zod";

const QUICK = Deno.args.includes("--quick");
const MEMORY = Deno.args.includes("--memory");
const TURNS = QUICK ? 2 : 4;
const WARM = QUICK ? 20 : 100;
const ROUNDS = QUICK ? 21 : 101;

type Harness = "plain" | "task";
const HARNESSES: readonly Harness[] = ["plain", "task"];

interface Host {
  readonly stack: AgentStack;
  /** Microseconds of each tool call, in order. */
  readonly calls: number[];
}

async function mount(harness: Harness, dir: string, turns: number): Promise<Host> {
  const replies = [];
  for (let i = 0; i < turns; i++) {
    replies.push(
      toolCallsReply([
        harness === "task"
          ? {
            id: `c${i}`,
            name: "Task",
            args: { description: "Answer", prompt: "Say done", subagent_type: "general-purpose" },
          }
          : { id: `c${i}`, name: "echo", args: { text: "done" } },
      ]),
      textReply("Finished."),
    );
  }
  const stack = await createAgentStack({
    adapter: scriptedAdapter(replies),
    allow: ["Task", "echo"],
    ...(MEMORY ? {} : { sqlitePath: `${dir}/${harness}.db` }),
    // A child is resident while it runs: room for every parent and its child.
    maxAgents: 2 * turns + 2,
    context: { mode: "production" },
    rows: [{ id: "subagents", plugin: SubagentsService, config: {} }],
  });
  const children = [];
  for (let i = 0; i < turns; i++) children.push(textReply("Done."));
  stack.ctx.get(Llm).register(stack.ctx, { role: "subagent", adapter: scriptedAdapter(children) });
  stack.tools.register(stack.ctx, {
    name: "echo",
    description: "Echoes its text",
    parameters: z.strictObject({ text: z.string() }),
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    handler: ({ text }) => text,
  });
  const calls: number[] = [];
  stack.ctx.on(ToolsExecute, async (execution, next) => {
    const started = performance.now();
    const outcome = await next(execution);
    calls.push((performance.now() - started) * 1000);
    return outcome;
  });
  return { stack, calls };
}

/** Runs `count` turns on fresh agents; returns the median wall time per turn in microseconds. */
async function turns(host: Host, prefix: string, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const agent = await host.stack.agents.ensure(`${prefix}-${i}`);
    const started = performance.now();
    agent.send("Go");
    await agent.idle();
    times.push((performance.now() - started) * 1000);
    if (agent.status !== "idle") throw new Error(`turn ${prefix}-${i} ended ${agent.status}`);
  }
  return median(times);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const dir = await Deno.makeTempDir({ prefix: "terret-bench-task-" });
const total = WARM + ROUNDS * TURNS;
const hosts = {
  plain: await mount("plain", dir, total),
  task: await mount("task", dir, total),
};
try {
  for (const harness of HARNESSES) await turns(hosts[harness], "warm", WARM);
  const perTurn: Record<Harness, number[]> = { plain: [], task: [] };
  const perCall: Record<Harness, number[]> = { plain: [], task: [] };
  const turnRatios: number[] = [];
  const callRatios: number[] = [];
  const extra: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? HARNESSES : [...HARNESSES].reverse();
    const turn: Partial<Record<Harness, number>> = {};
    const call: Partial<Record<Harness, number>> = {};
    for (const harness of order) {
      const before = hosts[harness].calls.length;
      turn[harness] = await turns(hosts[harness], `r${round}`, TURNS);
      call[harness] = median(hosts[harness].calls.slice(before));
    }
    for (const harness of HARNESSES) {
      perTurn[harness].push(turn[harness]!);
      perCall[harness].push(call[harness]!);
    }
    turnRatios.push(turn.task! / turn.plain!);
    callRatios.push(call.task! / call.plain!);
    extra.push(turn.task! - turn.plain!);
  }
  // The task host really ran children: one child session per Task, closed completed.
  const child = await hosts.task.stack.sessions.read("r0-0.sub-1");
  if ((child.at(-1)?.payload as { status?: string } | undefined)?.status !== "completed") {
    throw new Error("the child did not complete");
  }
  console.log(
    `Task round trip: ${ROUNDS} rounds of ${TURNS} turns per host (order alternated), ${
      MEMORY ? "memory" : "SQLite"
    } store`,
  );
  console.log(`  plain tool call (baseline): median ${median(perCall.plain).toFixed(1)} µs/call`);
  console.log(
    `  Task call (child created, one step, disposed): median ${
      median(perCall.task).toFixed(1)
    } µs/call`,
  );
  console.log(`  ratio Task/plain per call: median ${median(callRatios).toFixed(1)}`);
  console.log(
    `  turns: plain ${median(perTurn.plain).toFixed(1)} µs, with a Task ${
      median(perTurn.task).toFixed(1)
    } µs; ratio ${median(turnRatios).toFixed(3)}; a Task adds ${
      median(extra).toFixed(1)
    } µs a turn`,
  );
} finally {
  for (const harness of HARNESSES) await hosts[harness].stack.dispose();
  await Deno.remove(dir, { recursive: true });
}
