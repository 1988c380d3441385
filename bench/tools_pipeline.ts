// deno-lint-ignore-file no-console
/**
 * Tool pipeline and prompt assembly overhead: the wall time of one `tools.execute` (pre_execute waterfall, the
 * allow-list gate with a cached session policy, zod validation, execute waterfall, handler, post_execute, output
 * cap) against calling the handler directly, and of one `prompt.assemble` with ten sections. Production mode
 * (contracts not re-validated per dispatch), in-memory log. Prints median and p99 in microseconds.
 *
 * Run: deno run -A bench/tools_pipeline.ts [--quick]
 *
 * @module
 */
import { z } from "zod";
import { type Context, createContext } from "@terret/hames";
import {
  memoryStorePlugin,
  PromptAssembler,
  PromptKey,
  SessionsKey,
  sessionsPlugin,
  ToolAllowList,
  ToolRegistry,
  ToolsExecute,
  ToolsKey,
  ToolsPostExecute,
  ToolsPreExecute,
} from "@terret/core";

const quick = Deno.args.includes("--quick");
const CALLS = quick ? 2_000 : 20_000;

async function timed(label: string, n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(500, n); i++) await fn(i);
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    samples[i] = performance.now() - start;
  }
  samples.sort();
  const us = (q: number) => (samples[Math.min(n - 1, Math.floor(q * n))]! * 1000).toFixed(1);
  console.log(
    `${label.padEnd(58)} median ${us(0.5).padStart(7)} µs   p99 ${us(0.99).padStart(7)} µs`,
  );
}

const ctx = createContext({ mode: "production" });
ctx.plugin(memoryStorePlugin, {});
ctx.plugin(sessionsPlugin, {});
ctx.plugin(ToolRegistry, {});
ctx.plugin(ToolAllowList, { allow: ["Read", "mcp__*", "tool_*"] });
ctx.plugin(PromptAssembler, {});
await ctx.idle();
const sessions = ctx.get(SessionsKey);
await sessions.create({ session_id: "s1", meta: { persona: "You are a benchmark." } });
await sessions.append("s1", { type: "policy/updated", payload: { allow: ["Read", "tool_*"] } });
const tools = ctx.get(ToolsKey);
const parameters = z.object({ path: z.string(), limit: z.number().int().default(100) });
const handler = ({ path, limit }: { path: string; limit: number }) => `read ${path} ${limit}`;
tools.register(ctx, { name: "Read", description: "Reads", parameters, handler });
tools.register(ctx, {
  name: "mcp__x__y",
  description: "Floor allows, session denies",
  parameters,
  handler,
});
for (let i = 0; i < 98; i++) {
  tools.register(ctx, { name: `tool_${i}`, description: "filler", parameters, handler });
}
const agent: Context = ctx.fork("agent");
const call = (i: number) => ({ id: `c${i}`, name: "Read", args: { path: "a.txt" } });
const options = { ctx: agent, session_id: "s1", agent_id: "a1" };

console.log(`${CALLS} sequential calls each (100 tools registered, session policy cached)`);
await timed("handler called directly (floor)", CALLS, async () => {
  const args = await parameters.parseAsync({ path: "a.txt" });
  return handler(args);
});
await timed("tools.execute, no listeners", CALLS, (i) => tools.execute(call(i), options));
for (const event of [ToolsPreExecute, ToolsExecute, ToolsPostExecute]) {
  for (let i = 0; i < 3; i++) ctx.on(event as typeof ToolsPreExecute, (p, next) => next(p));
}
await timed(
  "tools.execute, 3 pass-through listeners per waterfall",
  CALLS,
  (i) => tools.execute(call(i), options),
);
await timed(
  "tools.execute, denied by the session policy",
  CALLS,
  (i) => tools.execute({ ...call(i), name: "mcp__x__y" }, options),
);

const prompt = ctx.get(PromptKey);
for (let i = 0; i < 10; i++) {
  prompt.register(ctx, {
    name: `section-${i}`,
    priority: 100 + i,
    render: (env) => `Section ${i} for ${env.agent_id} with ${env.tools.length} tools.`,
  });
}
const names = tools.schemas().map((schema) => schema.name);
await timed(
  "prompt.assemble, 10 sections + persona (cached)",
  CALLS,
  () => prompt.assemble(agent, { session_id: "s1", agent_id: "a1", tools: names }),
);
await timed(
  "tools.offered, 100 tools (cached policy)",
  quick ? 200 : 2_000,
  () => tools.offered({ ctx: agent, session_id: "s1" }),
);
await ctx.dispose();
