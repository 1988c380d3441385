// deno-lint-ignore-file no-console
/**
 * Records the cassettes shipped in `core/llm/testdata/` through the real recorder middleware and OpenRouter adapter:
 *
 * - `plain_text.jsonl`: one text answer;
 * - `tool_turn.jsonl`: a two-request tool turn: the model thinks, says it will read the README and calls `Read`;
 *   the second request carries the tool result and the model answers from it.
 *
 * By default the responses come from the fake OpenRouter server, scripted in OpenRouter's wire shapes (keepalives,
 * fragmented tool arguments, reasoning details with a signature, the usage chunk with cost and cached tokens).
 * With `--live` (and `OPENROUTER_API_KEY`, optionally `TERRET_LIVE_MODEL`) the same two turns are recorded from the
 * real OpenRouter; the `Read` result is the same fixed text either way.
 *
 * Run: deno run -A tools/record_cassettes.ts [--live]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { createContext, Loader } from "@terret/hames";
import {
  Llm,
  llmRecorder,
  LlmRegistry,
  type LlmRequest,
  type Message,
  openRouterLlm,
  type StreamEvent,
  type ToolSchema,
} from "@terret/core";
import { chunk, fakeOpenRouter, sse, sseResponse, usageChunk } from "@terret/core/testing";

const live = Deno.args.includes("--live");
const out = fileURLToPath(new URL("../core/llm/testdata/", import.meta.url));
const MODEL = Deno.env.get("TERRET_LIVE_MODEL") ?? "anthropic/claude-sonnet-4.5";
const ID = { model: MODEL, provider: "Anthropic" };

const SYSTEM = "You are Terret, a coding agent working in /workspace. Be brief.";

/** Claude Code's `Read` and `Bash` tools, as a harness offers them. */
export const TOOLS: readonly ToolSchema[] = [
  {
    name: "Read",
    description: "Reads a file from the local filesystem. file_path must be an absolute path.",
    parameters: {
      type: "object",
      properties: {
        file_path: { type: "string", description: "The absolute path to the file to read" },
        offset: { type: "number", description: "The line number to start reading from" },
        limit: { type: "number", description: "The number of lines to read" },
      },
      required: ["file_path"],
      additionalProperties: false,
    },
  },
  {
    name: "Bash",
    description: "Executes a bash command in a persistent shell session.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command to execute" },
        timeout: { type: "number", description: "Optional timeout in milliseconds" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
];

const README =
  "# Terret\n\nAn agent harness.\n\n## Install\n\nRun `npx -y deno@2.9.6 task serve`.\n";

function scriptedPlain(): string {
  const id = { ...ID, id: "gen-1764431000-Pl41n" };
  return sse(
    ": OPENROUTER PROCESSING",
    ...["Hello", " there —", " how can", " I help?"].map((text) =>
      chunk({ role: "assistant", content: text }, id)
    ),
    chunk({ role: "assistant", content: "" }, {
      ...id,
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    }),
    usageChunk({ prompt_tokens: 31, completion_tokens: 8, cost: 0.000213, cached_tokens: 0 }, id),
    "[DONE]",
  );
}

function scriptedToolStep(): string {
  const id = { ...ID, id: "gen-1764431100-T0o1a" };
  const thought = ["The user asks about", " installation; the README", " will say."];
  const call = (fragment: Record<string, unknown>): object =>
    chunk({ role: "assistant", content: null, tool_calls: [fragment] }, id);
  return sse(
    ": OPENROUTER PROCESSING",
    ": OPENROUTER PROCESSING",
    ...thought.map((text) =>
      chunk({
        role: "assistant",
        content: "",
        reasoning: text,
        reasoning_details: [{
          type: "reasoning.text",
          text,
          format: "anthropic-claude-v1",
          index: 0,
        }],
      }, id)
    ),
    chunk({
      role: "assistant",
      content: "",
      reasoning_details: [{
        type: "reasoning.text",
        signature: "ErUBCkYIBhgCIkCm3s7dYF0mL2kqJ8wq9pQy4zJ1tX0vR==",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, id),
    chunk({ role: "assistant", content: "I'll read the README." }, id),
    call({
      index: 0,
      id: "toolu_01A09q90qw90lq917835lq9",
      type: "function",
      function: { name: "Read", arguments: "" },
    }),
    call({ index: 0, function: { arguments: '{"file_pa' } }),
    call({ index: 0, function: { arguments: 'th": "/workspace/R' } }),
    call({ index: 0, function: { arguments: 'EADME.md"}' } }),
    chunk({}, { ...id, finish_reason: "tool_calls", native_finish_reason: "tool_use" }),
    usageChunk(
      { prompt_tokens: 1240, completion_tokens: 74, cost: 0.004830, cached_tokens: 0 },
      id,
    ),
    "[DONE]",
  );
}

function scriptedAnswerStep(): string {
  const id = { ...ID, id: "gen-1764431104-An5w3" };
  const pieces = [
    "To install,",
    " run `npx -y deno@2.9.6",
    " task serve` — the",
    " README's only step.",
  ];
  return sse(
    ": OPENROUTER PROCESSING",
    ...pieces.map((text) => chunk({ role: "assistant", content: text }, id)),
    chunk({ role: "assistant", content: "" }, {
      ...id,
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    }),
    usageChunk(
      { prompt_tokens: 1352, completion_tokens: 29, cost: 0.001147, cached_tokens: 1240 },
      id,
    ),
    "[DONE]",
  );
}

/** Assembles the assistant message a loop would log from one step's events. */
function assistantMessage(events: readonly StreamEvent[]): Message {
  const parts: Message["parts"][number][] = [];
  let thinking = "";
  let signature: string | undefined;
  let text = "";
  for (const event of events) {
    if (event.type === "thinking_delta") {
      thinking += event.text;
      if (event.signature !== undefined) signature = event.signature;
    } else if (event.type === "text_delta") text += event.text;
    else if (event.type === "tool_call_end" && event.args !== undefined) {
      if (thinking !== "") {
        parts.push(
          signature === undefined
            ? { type: "thinking", text: thinking }
            : { type: "thinking", text: thinking, signature },
        );
        thinking = "";
      }
      if (text !== "") parts.push({ type: "text", text });
      text = "";
      parts.push({ type: "tool_call", id: event.id, name: event.name, args: event.args });
    }
  }
  if (text !== "") parts.push({ type: "text", text });
  return { role: "assistant", parts };
}

async function record(
  file: string,
  steps: (ask: (request: LlmRequest) => Promise<StreamEvent[]>) => Promise<void>,
  scripts: string[],
): Promise<void> {
  await using server = await fakeOpenRouter();
  for (const script of scripts) server.script(sseResponse(script, { chunks: 61, delayMs: 2 }));
  await using ctx = createContext();
  const key = live ? Deno.env.get("OPENROUTER_API_KEY") : "sk-or-scripted";
  if (key === undefined) throw new Error("Cannot record live: OPENROUTER_API_KEY is not set");
  const main = live
    ? { model: MODEL, api_key: key, headers: { "X-Title": "Terret cassette recorder" } }
    : { model: MODEL, api_key: key, base_url: server.url };
  await new Loader(ctx).load([
    { id: "llm", plugin: LlmRegistry },
    { id: "llm.main", plugin: openRouterLlm, config: main },
    { id: "llm.recorder", plugin: llmRecorder, config: { path: `${out}${file}` } },
  ]);
  const ask = async (request: LlmRequest): Promise<StreamEvent[]> => {
    const events: StreamEvent[] = [];
    for await (const event of ctx.get(Llm).stream(request)) events.push(event);
    const last = events.at(-1);
    if (last?.type !== "message_stop") throw new Error(`Recording failed: ${JSON.stringify(last)}`);
    return events;
  };
  await steps(ask);
  console.log(`wrote core/llm/testdata/${file}`);
}

await Deno.mkdir(out, { recursive: true });
await record("plain_text.jsonl", async (ask) => {
  await ask({
    system: SYSTEM,
    messages: [{ role: "user", parts: [{ type: "text", text: "Say hello in five words." }] }],
  });
}, [scriptedPlain()]);

await record("tool_turn.jsonl", async (ask) => {
  const messages: Message[] = [
    {
      role: "user",
      parts: [{ type: "text", text: "How do I install this project? Check the README." }],
    },
  ];
  const first = await ask({ system: SYSTEM, messages, tools: TOOLS });
  const assistant = assistantMessage(first);
  const calls = assistant.parts.filter((part) => part.type === "tool_call");
  messages.push(assistant);
  for (const call of calls) {
    messages.push({
      role: "tool",
      parts: [{
        type: "tool_result",
        id: call.id,
        name: call.name,
        content: README,
        is_error: false,
      }],
    });
  }
  await ask({ system: SYSTEM, messages, tools: TOOLS });
}, [scriptedToolStep(), scriptedAnswerStep()]);
