/**
 * The opt-in live lane: one real tool-calling turn through OpenRouter, recorded to a cassette and replayed.
 *
 * Run: TERRET_LIVE=1 OPENROUTER_API_KEY=sk-or-… [TERRET_LIVE_MODEL=openai/gpt-4o-mini] \
 *      [TERRET_LIVE_BASE_URL=http://localhost:8080/v1] deno test -A core/llm/openrouter/live_test.ts
 *
 * `TERRET_LIVE_BASE_URL` points the lane at another OpenAI-compatible server (vLLM, llama.cpp, Ollama).
 */
import assert from "node:assert/strict";
import { type Context, createContext, Loader } from "@terret/hames";
import { readCassette } from "../cassette/cassette.ts";
import { llmRecorder } from "../cassette/recorder.ts";
import { llmReplayer } from "../cassette/replayer.ts";
import { Llm, LlmRegistry } from "../llm_registry.ts";
import type { LlmRequest, Message, StreamEvent, ToolSchema } from "../vocabulary.ts";
import { openRouterLlm } from "./plugin.ts";

const KEY = Deno.env.get("OPENROUTER_API_KEY");
const MODEL = Deno.env.get("TERRET_LIVE_MODEL") ?? "openai/gpt-4o-mini";
const BASE_URL = Deno.env.get("TERRET_LIVE_BASE_URL") ?? "https://openrouter.ai/api/v1";
const SKIP = Deno.env.get("TERRET_LIVE") !== "1"
  ? "TERRET_LIVE is not 1"
  : KEY === undefined || KEY === ""
  ? "OPENROUTER_API_KEY is not set"
  : undefined;
if (SKIP !== undefined) {
  // deno-lint-ignore no-console
  console.warn(
    `SKIPPED: live OpenRouter lane (${SKIP}); set TERRET_LIVE=1 and OPENROUTER_API_KEY to run one real tool-calling turn`,
  );
}

const READ: ToolSchema = {
  name: "Read",
  description: "Reads a file from the local filesystem. file_path must be an absolute path.",
  parameters: {
    type: "object",
    properties: { file_path: { type: "string", description: "The absolute path to the file" } },
    required: ["file_path"],
    additionalProperties: false,
  },
};
const README = "# Terret\n\n## Install\n\nRun `npx -y deno@2.9.6 task serve`.\n";

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function boot(rows: Parameters<Loader["load"]>[0]): Promise<Context> {
  const ctx = createContext({ mode: "test" });
  await new Loader(ctx).load([{ id: "llm", plugin: LlmRegistry }, ...rows]);
  return ctx;
}

Deno.test({
  name: "live: a real tool-calling turn through OpenRouter, recorded, then replayed identically",
  ignore: SKIP !== undefined,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-live-" });
    try {
      const path = `${dir}/live.jsonl`;
      const main = {
        model: MODEL,
        api_key: KEY!,
        base_url: BASE_URL,
        params: { temperature: 0, max_tokens: 300 },
      };
      const ctx = await boot([
        { id: "llm.main", plugin: openRouterLlm, config: main },
        { id: "llm.recorder", plugin: llmRecorder, config: { path } },
      ]);
      const messages: Message[] = [{
        role: "user",
        parts: [{
          type: "text",
          text: "Use the Read tool on /workspace/README.md, then tell me the install command.",
        }],
      }];
      const first: LlmRequest = {
        system: "You are a coding agent. Use tools.",
        messages,
        tools: [READ],
      };
      const step1 = await collect(ctx.get(Llm).stream(first));
      const stop = step1.at(-1);
      assert.equal(
        stop?.type === "message_stop" && stop.finishReason,
        "tool_calls",
        JSON.stringify(stop),
      );
      const calls = step1.flatMap((event) => event.type === "tool_call_end" ? [event] : []);
      assert.equal(calls.length >= 1, true, JSON.stringify(step1));
      assert.equal(calls[0]!.name, "Read");
      assert.equal(typeof calls[0]!.args?.file_path, "string");
      const usage = step1.find((event) => event.type === "usage");
      assert.equal(usage?.type === "usage" && usage.usage.input_tokens > 0, true);

      const second: LlmRequest = {
        ...first,
        messages: [
          ...messages,
          {
            role: "assistant",
            parts: calls.map((call) => ({
              type: "tool_call" as const,
              id: call.id,
              name: call.name,
              args: call.args!,
            })),
          },
          ...calls.map((call): Message => ({
            role: "tool",
            parts: [{
              type: "tool_result",
              id: call.id,
              name: call.name,
              content: README,
              is_error: false,
            }],
          })),
        ],
      };
      const step2 = await collect(ctx.get(Llm).stream(second));
      await ctx.dispose();
      const answer = step2.flatMap((event) => event.type === "text_delta" ? [event.text] : []).join(
        "",
      );
      assert.equal(step2.at(-1)?.type, "message_stop", JSON.stringify(step2.at(-1)));
      assert.match(answer, /deno/i);

      assert.equal((await Deno.readTextFile(path)).includes(KEY!), false);
      const cassette = await readCassette(path);
      assert.deepStrictEqual(cassette.interactions.map((interaction) => interaction.events), [
        step1,
        step2,
      ]);
      const replay = await boot([
        {
          id: "llm.main",
          plugin: openRouterLlm,
          config: { model: MODEL, api_key: "unused", base_url: "http://127.0.0.1:9/v1" },
        },
        { id: "llm.replayer", plugin: llmReplayer, config: { path } },
      ]);
      assert.deepStrictEqual(await collect(replay.get(Llm).stream(first)), step1);
      assert.deepStrictEqual(await collect(replay.get(Llm).stream(second)), step2);
      await replay.dispose();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
