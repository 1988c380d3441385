/**
 * Test helpers for code that talks to models: a fake OpenRouter server (a real HTTP server on 127.0.0.1 serving
 * scripted server-sent event byte streams), builders for OpenRouter-shaped chunks and whole turns, and the shipped
 * cassettes.
 *
 * @example
 * ```ts ignore
 * import { fakeOpenRouter, sseResponse, textTurn } from "@terret/core/testing";
 * import { OpenRouterAdapter } from "@terret/core/llm";
 *
 * await using server = await fakeOpenRouter();
 * server.script(sseResponse(textTurn(["Hel", "lo"])));
 * const adapter = new OpenRouterAdapter({ model: "test/model", apiKey: "sk-test", baseUrl: server.url });
 * for await (const event of adapter.stream({ messages: [] })) console.log(event.type);
 * console.log(server.requests[0]!.body); // the Chat Completions body the adapter sent
 * ```
 *
 * @module
 */
export {
  type ExchangeEnd,
  type FakeExchange,
  type FakeOpenRouter,
  fakeOpenRouter,
  type ReceivedRequest,
  type Script,
  type ScriptedResponse,
} from "./llm/testing/fake_openrouter.ts";
export {
  chunk,
  type ChunkOptions,
  jsonError,
  type ScriptedToolCall,
  sse,
  sseResponse,
  textTurn,
  toolCallTurn,
  TRANSCRIPTS,
  type TurnOptions,
  usageChunk,
  type UsageFigures,
} from "./llm/testing/wire.ts";
export { type RecordingTiming, recordingTiming } from "./llm/testing/timing.ts";
export {
  errorReply,
  type ReplyOptions,
  type ResponseScript,
  type ScriptedAdapter,
  scriptedAdapter,
  type ScriptedAdapterOptions,
  type ScriptedCall,
  type ScriptGate,
  type ScriptItem,
  textReply,
  toolCallsReply,
} from "./llm/testing/scripted_adapter.ts";

/**
 * The cassettes shipped with `@terret/core` (see `core/llm/cassette/cassette.ts` for the format):
 * `plainText`, one text answer; `toolTurn`, a two-request Read tool turn (the model asks to read `README.md`, then
 * answers from the result). Use them with `llmReplayer` (`path: CASSETTES.toolTurn.href`).
 */
export const CASSETTES: Readonly<{ plainText: URL; toolTurn: URL }> = Object.freeze({
  plainText: new URL("./llm/testdata/plain_text.jsonl", import.meta.url),
  toolTurn: new URL("./llm/testdata/tool_turn.jsonl", import.meta.url),
});
export {
  type AgentStack,
  type AgentStackOptions,
  createAgentStack,
  type EventShape,
  eventShapes,
} from "./loop/testing.ts";
export {
  createToolStack,
  type JournalEntry,
  type ScriptedTool,
  scriptedTool,
  type ScriptedToolOptions,
  type ToolStack,
  type ToolStackOptions,
} from "./tools/testing.ts";
export { seededRandom } from "./testing/seeded_random.ts";
export { type RecordedRead, recordReads } from "./sessions/testing.ts";
