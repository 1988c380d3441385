// deno-lint-ignore-file no-console
/**
 * What an evicted agent keeps in memory once its session has a sizeable history. `max_agents` 20; 300 agents each
 * run one turn (a tool call whose result is 100 kB of text, then an answer), so each session's derived history
 * holds about 100 kB, and 280 agents are evicted to make room. The V8 heap in use after a full collection is read
 * after the first 20 turns (every agent resident: the baseline) and after all 300: the growth divided by the 280
 * evicted agents is what each leaves behind. With the per-session caches dropped on eviction it is a small fraction
 * of the history; a cache that keeps an evicted session's history shows as about the history's size.
 *
 * The sessions are in a SQLite file (the memory store would keep every event in memory by design); the model is the
 * scripted adapter (in process, no HTTP): the figure is memory, not latency.
 *
 * Run: deno run -A bench/evicted_history.ts (it runs itself again with `--v8-flags=--expose-gc`)
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { type LlmAdapter, ToolsKey } from "@terret/core";
import { createAgentStack, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";
import { BENCH_LOCK_FLAG } from "./_measure.ts";

const AGENTS = 300;
const RESIDENT = 20;
const RESULT_BYTES = 100_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  // Run again with the collector exposed (as `deno task bench` starts every script without it).
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH_LOCK_FLAG, "--v8-flags=--expose-gc", fileURLToPath(import.meta.url)],
  }).spawn().status;
  Deno.exit(code);
}

const script = Array.from({ length: AGENTS }, (_, i) => [
  toolCallsReply([{ id: `call_${i}`, name: "work", args: { step: i } }]),
  textReply("Done."),
]).flat();
const scripted = scriptedAdapter(script);
/** The scripted replies, handed an empty request: the script keeps every request it sees, histories included. */
const adapter: LlmAdapter = {
  capabilities: scripted.capabilities,
  countTokens: (request) => scripted.countTokens(request),
  stream: (_request, options) => scripted.stream({ messages: [] }, options),
};
const dir = await Deno.makeTempDir({ prefix: "terret-bench-evicted-" });
const stack = await createAgentStack({
  adapter,
  sqlitePath: `${dir}/terret.db`,
  allow: ["work"],
  maxAgents: RESIDENT,
});
try {
  stack.ctx.get(ToolsKey).register(stack.ctx, {
    name: "work",
    description: "Does one step of the work",
    parameters: { type: "object", properties: { step: { type: "number" } }, required: ["step"] },
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    // Each result distinct, so no two sessions share one string.
    handler: (args) => `step ${(args as { step: number }).step}: ${"x".repeat(RESULT_BYTES)}`,
  });

  /** The V8 heap in use after a full collection (twice, with a turn of the event loop between). */
  const heap = async (): Promise<number> => {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc!();
    return Deno.memoryUsage().heapUsed;
  };

  const turns = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i++) {
      const agent = await stack.agents.create({ agent_id: `agent-${i}` });
      agent.send("Do the work");
      await agent.idle();
      if (agent.status !== "idle") throw new Error(`agent-${i} ended ${agent.status}`);
    }
  };

  await turns(0, RESIDENT);
  const baseline = await heap();
  await turns(RESIDENT, AGENTS);
  const after = await heap();
  const evicted = AGENTS - RESIDENT;
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
  console.log(
    `max_agents ${RESIDENT}, ${AGENTS} agents, each session's history ~${
      kb(RESULT_BYTES)
    } (one tool result)`,
  );
  console.log(`heap after ${RESIDENT} turns (baseline): ${(baseline / 2 ** 20).toFixed(1)} MB`);
  console.log(`heap after ${AGENTS} turns:            ${(after / 2 ** 20).toFixed(1)} MB`);
  console.log(
    `retained per evicted agent: ${kb((after - baseline) / evicted)} (${
      ((after - baseline) / evicted / RESULT_BYTES).toFixed(3)
    }x its history)`,
  );
} finally {
  await stack[Symbol.asyncDispose]();
  await Deno.remove(dir, { recursive: true });
}
