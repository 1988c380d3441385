// deno-lint-ignore-file no-console
/**
 * Records `examples/demo/notes_turn.jsonl`, the cassette the no-key demo serves: a two-request `Read` turn (the
 * model reads `/tmp/terret-demo/notes.txt`, then answers from it). The responses are scripted in OpenRouter's wire
 * shapes and served by the fake OpenRouter server; they go through the real OpenRouter adapter and the recorder
 * middleware, so the cassette is exactly what the replayer plays back. It is a recording, not a model: whatever the
 * notes file says, the answer is the recorded one.
 *
 * Run: deno run -A examples/demo/record.ts
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

const OUT = fileURLToPath(new URL("./notes_turn.jsonl", import.meta.url));
const MODEL = "anthropic/claude-sonnet-4.5";
const NOTES = "/tmp/terret-demo/notes.txt";
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

function readStep(): string {
  const id = { model: MODEL, provider: "Anthropic", id: "gen-demo-read" };
  const call = (fragment: Record<string, unknown>): object =>
    chunk({ role: "assistant", content: null, tool_calls: [fragment] }, id);
  return sse(
    chunk({ role: "assistant", content: "I'll read your notes." }, id),
    call({
      index: 0,
      id: "toolu_demo_read_1",
      type: "function",
      function: { name: "Read", arguments: "" },
    }),
    call({ index: 0, function: { arguments: '{"file_path": "/tmp/terret-' } }),
    call({ index: 0, function: { arguments: 'demo/notes.txt"}' } }),
    chunk({}, { ...id, finish_reason: "tool_calls", native_finish_reason: "tool_use" }),
    usageChunk({ prompt_tokens: 912, completion_tokens: 41, cost: 0.003351, cached_tokens: 0 }, id),
    "[DONE]",
  );
}

function answerStep(): string {
  const id = { model: MODEL, provider: "Anthropic", id: "gen-demo-answer" };
  const pieces = ["Your list has", " two items: buy milk,", " and call the plumber."];
  return sse(
    ...pieces.map((text) => chunk({ role: "assistant", content: text }, id)),
    chunk({ role: "assistant", content: "" }, {
      ...id,
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    }),
    usageChunk(
      { prompt_tokens: 987, completion_tokens: 17, cost: 0.003216, cached_tokens: 912 },
      id,
    ),
    "[DONE]",
  );
}

await using server = await fakeOpenRouter();
server.script(sseResponse(readStep(), { chunks: 17, delayMs: 20 }));
server.script(sseResponse(answerStep(), { chunks: 11, delayMs: 40 }));
await using ctx = createContext();
await new Loader(ctx).load([
  { id: "llm", plugin: LlmRegistry },
  {
    id: "llm.main",
    plugin: openRouterLlm,
    config: { model: MODEL, api_key: "sk-or-scripted", base_url: server.url },
  },
  { id: "llm.recorder", plugin: llmRecorder, config: { path: OUT } },
]);
const ask = async (request: LlmRequest): Promise<StreamEvent[]> => {
  const events: StreamEvent[] = [];
  for await (const event of ctx.get(Llm).stream(request)) events.push(event);
  if (events.at(-1)?.type !== "message_stop") throw new Error(`Recording failed: ${events.at(-1)}`);
  return events;
};
const messages: Message[] = [
  { role: "user", parts: [{ type: "text", text: `What is on my list? It is in ${NOTES}.` }] },
];
await ask({ messages, tools: [READ] });
messages.push({
  role: "assistant",
  parts: [
    { type: "text", text: "I'll read your notes." },
    { type: "tool_call", id: "toolu_demo_read_1", name: "Read", args: { file_path: NOTES } },
  ],
});
messages.push({
  role: "tool",
  parts: [{
    type: "tool_result",
    id: "toolu_demo_read_1",
    name: "Read",
    content: "     1\tbuy milk\n     2\tcall the plumber\n",
    is_error: false,
  }],
});
await ask({ messages, tools: [READ] });
console.log(`wrote ${OUT}`);
