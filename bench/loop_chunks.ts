// deno-lint-ignore-file no-console
/**
 * Streamed-chunk coalescing in the loop: one long answer of many small deltas, delivered by the fake OpenRouter
 * server in 16 KiB writes 1 ms apart (so they arrive as separate network reads), through an agent with every event
 * durable in SQLite (and once more with the writes unpaced, for raw throughput). Prints, without a scrubber (deltas coalesced per event-loop turn) and with one (one chunk per
 * run), the `assistant/chunk` events logged against the deltas received, the store's write transactions, and the
 * deltas handled per second.
 *
 * Run: deno run -A bench/loop_chunks.ts [--quick]
 *
 * @module
 */
import { openRouterLlm, SessionStoreKey } from "@terret/core";
import {
  chunk,
  createAgentStack,
  fakeOpenRouter,
  sse,
  sseResponse,
  usageChunk,
} from "@terret/core/testing";

const DELTAS = Deno.args.includes("--quick") ? 5_000 : 20_000;

function answer(): string {
  const items: object[] = [];
  for (let i = 0; i < DELTAS; i++) items.push(chunk({ content: `word${i % 10} ` }));
  items.push(chunk({}, { finish_reason: "stop" }));
  items.push(usageChunk({ prompt_tokens: 10, completion_tokens: DELTAS }));
  return sse(...items, "[DONE]");
}

async function run(scrub: boolean, delayMs: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "terret-chunks-" });
  try {
    await using server = await fakeOpenRouter();
    const body = answer();
    server.script(sseResponse(body, { chunks: 16 * 1024, delayMs }));
    await using stack = await createAgentStack({
      sqlitePath: `${dir}/chunks.db`,
      context: { mode: "production" },
    });
    await stack.ctx.plugin(openRouterLlm, {
      model: "test/model",
      base_url: server.url,
      api_key: "sk-bench",
      max_retries: 0,
    }).settled();
    if (scrub) {
      stack.sessions.registerScrubber(stack.ctx, (text) => text.replaceAll("sk-", "[REDACTED]"), {
        marker: "[REDACTED]",
      });
    }
    const agent = await stack.agents.ensure("chunks");
    const before = stack.ctx.get(SessionStoreKey).stats().groups;
    const started = performance.now();
    agent.send("Talk");
    await agent.idle();
    const wall = performance.now() - started;
    const events = await stack.sessions.read("chunks");
    const chunks = events.filter((event) => event.type === "assistant/chunk").length;
    const groups = stack.ctx.get(SessionStoreKey).stats().groups - before;
    const reads = Math.ceil(new TextEncoder().encode(body).byteLength / (16 * 1024));
    console.log(
      `${
        scrub ? "with a scrubber   " : "without a scrubber"
      }: ${DELTAS} deltas in ~${reads} reads -> ` +
        `${chunks} assistant/chunk events, ${groups} write transactions, ${
          Math.round(DELTAS / (wall / 1000)).toLocaleString("en-US")
        } deltas/s (${wall.toFixed(0)} ms${
          delayMs > 0 ? `, paced by the server's ${delayMs} ms between writes` : ", writes unpaced"
        })`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const delayMs of [1, 0]) {
  await run(false, delayMs);
  await run(true, delayMs);
}
