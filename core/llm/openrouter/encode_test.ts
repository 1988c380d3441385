import assert from "node:assert/strict";
import type { LlmRequest } from "../vocabulary.ts";
import { type EncodeCache, encodeChatRequest, encodeChatRequestJson } from "./encode.ts";

const DETAILS = [
  {
    type: "reasoning.text",
    text: "Read it first.",
    signature: "sig==",
    format: "anthropic-claude-v1",
    index: 0,
  },
];

Deno.test("encodeChatRequest() encodes a multi-step tool turn as Chat Completions messages", () => {
  const request: LlmRequest = {
    system: "You are a coding agent.",
    messages: [
      { role: "user", parts: [{ type: "text", text: "What does README.md say?" }] },
      {
        role: "assistant",
        parts: [
          { type: "thinking", text: "Read it first.", signature: JSON.stringify(DETAILS) },
          { type: "text", text: "Let me read it." },
          { type: "tool_call", id: "call_1", name: "Read", args: { file_path: "/w/README.md" } },
          { type: "tool_call", id: "call_2", name: "Bash", args: { command: "ls" } },
        ],
      },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          id: "call_1",
          name: "Read",
          content: "# Terret",
          is_error: false,
        }],
      },
      {
        role: "tool",
        parts: [{
          type: "tool_result",
          id: "call_2",
          name: "Bash",
          content: [{ type: "text", text: "exit 1" }],
          is_error: true,
        }],
      },
      {
        role: "user",
        parts: [
          { type: "text", text: "And this?" },
          { type: "image", data: "iVBORw0KGgo=", media_type: "image/png" },
          { type: "image", url: "https://example.com/a.jpg" },
        ],
      },
    ],
    tools: [{
      name: "Read",
      description: "Reads a file",
      parameters: { type: "object", properties: { file_path: { type: "string" } } },
    }],
    params: { temperature: 0.2, model: "ignored/by-params", stream: false },
  };
  assert.deepStrictEqual(
    encodeChatRequest(request, {
      model: "anthropic/claude-sonnet-4.5",
      params: { temperature: 1, top_p: 0.9 },
    }),
    {
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 0.9,
      model: "anthropic/claude-sonnet-4.5",
      messages: [
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "What does README.md say?" },
        {
          role: "assistant",
          content: "Let me read it.",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "Read", arguments: '{"file_path":"/w/README.md"}' },
            },
            {
              id: "call_2",
              type: "function",
              function: { name: "Bash", arguments: '{"command":"ls"}' },
            },
          ],
          reasoning_details: DETAILS,
        },
        { role: "tool", tool_call_id: "call_1", content: "# Terret" },
        { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "exit 1" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "And this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/a.jpg" } },
          ],
        },
      ],
      stream: true,
      tools: [{
        type: "function",
        function: {
          name: "Read",
          description: "Reads a file",
          parameters: { type: "object", properties: { file_path: { type: "string" } } },
        },
      }],
    },
  );
});

Deno.test("encodeChatRequest() sends null content for tool calls alone and reasoning text without details", () => {
  const body = encodeChatRequest({
    model: "openai/gpt-5.2",
    messages: [{
      role: "assistant",
      parts: [
        { type: "thinking", text: "Plan: " },
        { type: "thinking", text: "grep.", signature: "opaque-anthropic-signature" },
        { type: "tool_call", id: "c", name: "Grep", args: {} },
      ],
    }],
    tools: [],
  }, { model: "fallback/model" });
  assert.deepStrictEqual(body, {
    stream_options: { include_usage: true },
    model: "openai/gpt-5.2",
    messages: [{
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "Grep", arguments: "{}" } }],
      reasoning: "Plan: grep.",
    }],
    stream: true,
  });
});

Deno.test("encodeChatRequest() replays the last signed thinking part's reasoning_details only", () => {
  const earlier = [{ type: "reasoning.text", text: "a", index: 0 }];
  const body = encodeChatRequest({
    messages: [{
      role: "assistant",
      parts: [
        { type: "thinking", text: "a", signature: JSON.stringify(earlier) },
        { type: "text", text: "x" },
        { type: "thinking", text: "b", signature: JSON.stringify(DETAILS) },
      ],
    }],
  }, { model: "m" });
  assert.deepStrictEqual((body.messages as Record<string, unknown>[])[0], {
    role: "assistant",
    content: "x",
    reasoning_details: DETAILS,
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

Deno.test("encodeChatRequestJson() is JSON.stringify(encodeChatRequest()) byte for byte, cached or not", () => {
  const cache: EncodeCache = { messages: new WeakMap(), tools: new WeakMap() };
  const user = deepFreeze({
    role: "user" as const,
    parts: [{ type: "text" as const, text: 'Hi \u2028 "there"' }],
  });
  const call = deepFreeze({
    role: "assistant" as const,
    parts: [{ type: "tool_call" as const, id: "c1", name: "Read", args: { path: "a.txt" } }],
  });
  const result = deepFreeze({
    role: "tool" as const,
    parts: [{
      type: "tool_result" as const,
      id: "c1",
      name: "Read",
      content: "text",
      is_error: false,
    }],
  });
  const empty = deepFreeze({ role: "tool" as const, parts: [] });
  const tool = deepFreeze({
    name: "Read",
    description: "Reads a file",
    parameters: { type: "object", properties: { path: { type: "string" } } },
  });
  const requests: LlmRequest[] = [
    { messages: [user] },
    { system: "Be brief.", messages: [user, call, result], tools: [tool] },
    { system: "", messages: [user, empty, call], tools: [] },
    { messages: [user], params: { temperature: 0.5, tools: "ignored", skip: undefined } },
    { messages: [user, call, result], model: "other/model", tools: [tool] },
  ];
  const options = [
    { model: "m/x" },
    { model: "m/x", params: { messages: "first", stream: false, top_p: 0.9 } },
    {
      model: "m/x",
      params: { tools: [{ custom: true }], stream_options: { include_usage: false } },
    },
  ];
  for (const option of options) {
    for (const request of requests) {
      for (let round = 0; round < 2; round++) {
        assert.equal(
          encodeChatRequestJson(request, option, cache),
          JSON.stringify(encodeChatRequest(request, option)),
        );
      }
    }
  }
  assert.deepStrictEqual(
    [cache.messages.has(user), cache.messages.has(call), cache.tools.has(tool)],
    [true, true, true],
  );
  // A message frozen only at its top is encoded afresh every time: a change below it shows in the next body.
  const parts = [{ type: "text" as const, text: "before" }];
  const shallow = Object.freeze({ role: "user" as const, parts });
  const first = encodeChatRequestJson({ messages: [shallow] }, { model: "m/x" }, cache);
  parts[0] = { type: "text", text: "after" };
  const second = encodeChatRequestJson({ messages: [shallow] }, { model: "m/x" }, cache);
  assert.deepStrictEqual(
    [JSON.parse(first).messages[0].content, JSON.parse(second).messages[0].content],
    ["before", "after"],
  );
  assert.equal(cache.messages.has(shallow), false);
});
