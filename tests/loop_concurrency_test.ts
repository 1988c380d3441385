/**
 * 500 agents in one process, each running a 3-step tool turn concurrently through the real OpenRouter adapter
 * against the fake server, every event durable in one SQLite file: all complete, every session's seqs are
 * contiguous, and one agent stuck in a tool blocks nobody (the other 499 finish while it waits). Wall time and
 * memory per agent are printed; `bench/loop_overhead.ts` measures them properly.
 */
import assert from "node:assert/strict";
import { openRouterLlm } from "@terret/core";
import {
  createAgentStack,
  fakeOpenRouter,
  type ReceivedRequest,
  scriptedTool,
  sseResponse,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";

const AGENTS = 500;

/** Step 1 and 2 ask for a tool, step 3 answers; the step is told by the tool results in the request. */
function answer(request: ReceivedRequest) {
  const messages = (request.body as { messages: { role: string }[] }).messages;
  const done = messages.filter((message) => message.role === "tool").length;
  return sseResponse(
    done < 2
      ? toolCallTurn([{ id: `call_${done + 1}`, name: "work", args: { step: done + 1 } }], {
        keepalive: false,
      })
      : textTurn("All done.", { keepalive: false }),
  );
}

Deno.test(`${AGENTS} agents run 3-step tool turns at once; a stuck one blocks nobody`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-500-" });
  try {
    await using server = await fakeOpenRouter();
    server.script(...Array.from({ length: AGENTS * 3 }, () => answer));
    await using stack = await createAgentStack({
      allow: ["work"],
      maxAgents: AGENTS,
      sqlitePath: `${dir}/sessions.db`,
      context: { mode: "production" },
    });
    await stack.ctx.plugin(openRouterLlm, {
      model: "test/model",
      base_url: server.url,
      api_key: "sk-test",
      max_retries: 0,
    }).settled();
    // The tool holds agent-0's first call until released; everyone else's returns at once.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => release = resolve);
    let reached: () => void = () => {};
    const stuck = new Promise<void>((resolve) => reached = resolve);
    let calls = 0;
    stack.tools.register(stack.ctx, {
      ...scriptedTool("work").definition,
      async handler(args, run) {
        calls++;
        if (run.agent_id === "agent-0" && args.step === 1) {
          reached();
          await held;
        }
        return `step ${args.step} done`;
      },
    });
    const ids = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`);
    const agents = await Promise.all(ids.map((id) => stack.agents.ensure(id)));
    const rssBefore = Deno.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
    const started = performance.now();
    for (const agent of agents) agent.send("Do the work");
    await stuck;
    await Promise.all(agents.slice(1).map((agent) => agent.idle()));
    const wall = performance.now() - started;
    clearInterval(sampler);
    assert.equal(agents[0]!.status, "running");
    release();
    await agents[0]!.idle();
    for (const agent of agents) {
      const events = await stack.sessions.read(agent.id);
      assert.deepStrictEqual(events.map((event) => event.seq), events.map((_, i) => i + 1));
      assert.equal(events.length, 18);
      assert.deepStrictEqual(events.at(-1)!.payload, { status: "completed" });
      assert.equal(agent.status, "idle");
    }
    assert.equal(server.requests.length, AGENTS * 3);
    assert.equal(calls, AGENTS * 2);
    // deno-lint-ignore no-console
    console.log(
      `${AGENTS - 1} turns of 3 steps in ${wall.toFixed(0)} ms while one waited; peak RSS ` +
        `${((peak - rssBefore) / AGENTS / 1024).toFixed(1)} KiB per agent above the ${
          (rssBefore / 1048576).toFixed(0)
        } MiB baseline`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
