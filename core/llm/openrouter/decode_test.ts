import assert from "node:assert/strict";
import { chunk } from "../../testing.ts";
import type { StreamEvent } from "../vocabulary.ts";
import { ChatCompletionsDecoder } from "./decode.ts";

/** Feeds data payloads (objects are JSON-encoded) and returns every event, ending the body when no terminal came. */
function decode(...payloads: (object | string)[]): StreamEvent[] {
  const decoder = new ChatCompletionsDecoder();
  const out: StreamEvent[] = [];
  for (const payload of payloads) {
    const data = typeof payload === "string" ? payload : JSON.stringify(payload);
    if (decoder.message(data, out)) return out;
  }
  decoder.end(out);
  return out;
}

const START: StreamEvent = {
  type: "message_start",
  id: "gen-1764430000-test",
  model: "test/model",
};

Deno.test("ChatCompletionsDecoder: invalid JSON in a data line is a protocol error, not an exception", () => {
  assert.deepStrictEqual(decode(chunk({ content: "Hi" }), "{not json"), [
    START,
    { type: "text_delta", text: "Hi" },
    {
      type: "error",
      error: {
        kind: "protocol",
        message:
          `Cannot complete the model stream: invalid JSON in a data line (Expected property name or '}' in JSON at position 1 (line 1 column 2)): "{not json"`,
        retryable: false,
      },
    },
  ]);
});

Deno.test("ChatCompletionsDecoder: a data line that is JSON but not an object is a protocol error", () => {
  assert.deepStrictEqual(decode("42"), [{
    type: "error",
    error: {
      kind: "protocol",
      message: 'Cannot complete the model stream: a data line is not a JSON object: "42"',
      retryable: false,
    },
  }]);
});

Deno.test("ChatCompletionsDecoder: tool arguments that are not JSON, or not an object, end with argsError", () => {
  const events = decode(
    chunk({
      tool_calls: [{ index: 0, id: "c1", function: { name: "Bash", arguments: "{cmd: ls" } }],
    }),
    chunk({ tool_calls: [{ index: 1, id: "c2", function: { name: "Read", arguments: "[1,2]" } }] }),
    chunk({ tool_calls: [{ index: 2, id: "c3", function: { name: "Glob", arguments: "" } }] }),
    chunk({}, { finish_reason: "tool_calls" }),
    "[DONE]",
  );
  assert.deepStrictEqual(events.filter((event) => event.type === "tool_call_end"), [
    {
      type: "tool_call_end",
      index: 0,
      id: "c1",
      name: "Bash",
      args: undefined,
      argsError: {
        message:
          "Invalid JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        raw: "{cmd: ls",
      },
    },
    {
      type: "tool_call_end",
      index: 1,
      id: "c2",
      name: "Read",
      args: undefined,
      argsError: { message: "The arguments are not a JSON object", raw: "[1,2]" },
    },
    { type: "tool_call_end", index: 2, id: "c3", name: "Glob", args: {} },
  ]);
  assert.deepStrictEqual(events.at(-1), {
    type: "message_stop",
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
  });
});

Deno.test("ChatCompletionsDecoder: an unknown finish reason maps to other, keeping the raw value", () => {
  assert.deepStrictEqual(
    decode(chunk({ content: "x" }, { finish_reason: "eos_token" }), "[DONE]"),
    [
      START,
      { type: "text_delta", text: "x" },
      { type: "message_stop", finishReason: "other", rawFinishReason: "eos_token" },
    ],
  );
  assert.deepStrictEqual(
    decode(chunk({}, { finish_reason: "length", native_finish_reason: "max_tokens" }), "[DONE]").at(
      -1,
    ),
    { type: "message_stop", finishReason: "length", rawFinishReason: "max_tokens" },
  );
});

Deno.test("ChatCompletionsDecoder: a name split across fragments is joined; a repeated name is not doubled", () => {
  const events = decode(
    chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "Re" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "ad" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "Read", arguments: '{"file_path":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: "Read", arguments: '"a"}' } }] }),
    chunk({}, { finish_reason: "tool_calls" }),
    "[DONE]",
  );
  assert.deepStrictEqual(events.slice(1, 5), [
    { type: "tool_call_start", index: 0, id: "c1", name: "Read" },
    { type: "tool_call_delta", index: 0, argsDelta: '{"file_path":' },
    { type: "tool_call_delta", index: 0, argsDelta: '"a"}' },
    { type: "tool_call_end", index: 0, id: "c1", name: "Read", args: { file_path: "a" } },
  ]);
});

Deno.test("ChatCompletionsDecoder: a call without id or index gets a stable generated id", () => {
  const events = decode(
    chunk({ tool_calls: [{ function: { name: "Glob", arguments: '{"pattern":"*.ts"}' } }] }),
    chunk({}, { finish_reason: "tool_calls" }),
  );
  assert.deepStrictEqual(events, [
    START,
    { type: "tool_call_start", index: 0, id: "call_gen-1764430000-test_0", name: "Glob" },
    { type: "tool_call_delta", index: 0, argsDelta: '{"pattern":"*.ts"}' },
    {
      type: "tool_call_end",
      index: 0,
      id: "call_gen-1764430000-test_0",
      name: "Glob",
      args: { pattern: "*.ts" },
    },
    { type: "message_stop", finishReason: "tool_calls", rawFinishReason: "tool_calls" },
  ]);
});

Deno.test("ChatCompletionsDecoder: [DONE] without a finish reason stops with stop or tool_calls", () => {
  assert.deepStrictEqual(decode(chunk({ content: "a" }), "[DONE]").at(-1), {
    type: "message_stop",
    finishReason: "stop",
  });
  const tools = decode(
    chunk({ tool_calls: [{ index: 0, id: "c", function: { name: "Glob", arguments: "{}" } }] }),
    "[DONE]",
  );
  assert.deepStrictEqual(tools.slice(-2), [
    { type: "tool_call_end", index: 0, id: "c", name: "Glob", args: {} },
    { type: "message_stop", finishReason: "tool_calls" },
  ]);
});

Deno.test("ChatCompletionsDecoder: refusal text and reasoning_content are surfaced", () => {
  assert.deepStrictEqual(
    decode(
      chunk({ reasoning_content: "hmm" }),
      chunk({ refusal: "I can't help with that." }),
      "[DONE]",
    ),
    [
      START,
      { type: "thinking_delta", text: "hmm" },
      { type: "text_delta", text: "I can't help with that." },
      { type: "message_stop", finishReason: "stop" },
    ],
  );
});

Deno.test("ChatCompletionsDecoder: encrypted and summary reasoning blocks merge per block, in order", () => {
  const events = decode(
    chunk({ reasoning_details: [{ type: "reasoning.summary", summary: "Plan: ", index: 0 }] }),
    chunk({ reasoning_details: [{ type: "reasoning.summary", summary: "read it", index: 0 }] }),
    chunk({
      reasoning_details: [{ type: "reasoning.encrypted", data: "gAAAA", id: "rs_1", index: 1 }],
    }),
    chunk({ reasoning_details: [{ type: "reasoning.encrypted", data: "BBBB", index: 1 }] }),
    chunk({ content: "Done." }, { finish_reason: "stop" }),
    "[DONE]",
  );
  assert.deepStrictEqual(events, [
    START,
    { type: "thinking_delta", text: "Plan: " },
    { type: "thinking_delta", text: "read it" },
    {
      type: "thinking_delta",
      text: "",
      signature: JSON.stringify([
        { type: "reasoning.summary", summary: "Plan: read it", index: 0 },
        { type: "reasoning.encrypted", data: "gAAAABBBB", id: "rs_1", index: 1 },
      ]),
    },
    { type: "text_delta", text: "Done." },
    { type: "message_stop", finishReason: "stop", rawFinishReason: "stop" },
  ]);
});

Deno.test("ChatCompletionsDecoder: an SSE event named error is a provider error", () => {
  const decoder = new ChatCompletionsDecoder();
  const out: StreamEvent[] = [];
  assert.equal(decoder.message('{"message":"Overloaded","code":529}', out, "error"), true);
  assert.deepStrictEqual(out, [{
    type: "error",
    error: {
      kind: "provider",
      message: "Cannot complete the model stream: provider error (529): Overloaded",
      retryable: true,
      status: 529,
    },
  }]);
});

Deno.test("ChatCompletionsDecoder: finish_reason error without an error body is a provider error", () => {
  assert.deepStrictEqual(decode(chunk({ content: "a" }), chunk({}, { finish_reason: "error" })), [
    START,
    { type: "text_delta", text: "a" },
    {
      type: "error",
      error: {
        kind: "provider",
        message:
          'Cannot complete the model stream: the provider ended the stream with finish reason "error"',
        retryable: true,
      },
    },
  ]);
});

Deno.test("ChatCompletionsDecoder: usage null on every chunk (OpenAI) is ignored; the last usage wins", () => {
  const events = decode(
    { ...chunk({ content: "a" }), usage: null },
    { ...chunk({}, { finish_reason: "stop" }), usage: null },
    { id: "x", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } },
    "[DONE]",
  );
  assert.deepStrictEqual(events.slice(-2), [
    { type: "usage", usage: { input_tokens: 3, output_tokens: 1 } },
    { type: "message_stop", finishReason: "stop", rawFinishReason: "stop" },
  ]);
});
