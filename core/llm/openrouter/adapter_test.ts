/**
 * The adapter contract suite: the OpenRouter adapter against a real HTTP server on 127.0.0.1 serving scripted SSE
 * byte streams (the transcripts of PROTOCOLS.md §1.10 and variations).
 */
import assert from "node:assert/strict";
import { createMemoryLogger } from "@terret/hames";
import {
  chunk,
  fakeOpenRouter,
  jsonError,
  recordingTiming,
  sse,
  sseResponse,
  textTurn,
  TRANSCRIPTS,
  usageChunk,
} from "../../testing.ts";
import type { LlmRequest, StreamEvent } from "../vocabulary.ts";
import { OpenRouterAdapter, type OpenRouterAdapterOptions } from "./adapter.ts";
import { stablePort } from "../../../tests/ports.ts";

const REQUEST: LlmRequest = {
  system: "You are terse.",
  messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

function adapter(url: string, options: Partial<OpenRouterAdapterOptions> = {}): OpenRouterAdapter {
  return new OpenRouterAdapter({
    model: "test/model",
    apiKey: "sk-or-test-0123456789",
    baseUrl: url,
    timing: recordingTiming(),
    ...options,
  });
}

const PLAIN_EVENTS: StreamEvent[] = [
  { type: "message_start", id: "gen-1764430000-k3Xq", model: "anthropic/claude-sonnet-4.5" },
  { type: "text_delta", text: "Hello" },
  { type: "text_delta", text: " — how can I help?" },
  {
    type: "usage",
    usage: { input_tokens: 1830, output_tokens: 9, cached_tokens: 1536, cost: 0.005625 },
  },
  { type: "message_stop", finishReason: "stop", rawFinishReason: "end_turn" },
];

Deno.test("a plain text turn yields start, text deltas, usage with cost and cached tokens, stop", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.plainText));
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, PLAIN_EVENTS);
  assert.equal(server.requests.length, 1);
  const request = server.requests[0]!;
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/api/v1/chat/completions");
  assert.equal(request.headers["authorization"], "Bearer sk-or-test-0123456789");
  assert.equal(request.headers["accept"], "text/event-stream");
  assert.deepStrictEqual(request.body, {
    stream_options: { include_usage: true },
    model: "test/model",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Hi" },
    ],
    stream: true,
  });
});

Deno.test("two parallel tool calls with interleaved argument fragments assemble by index", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.parallelTools));
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, [
    { type: "message_start", id: "gen-1764430100-Pq7w", model: "openai/gpt-5.2" },
    { type: "tool_call_start", index: 0, id: "call_A1", name: "read_file" },
    { type: "tool_call_delta", index: 0, argsDelta: '{"path":"src/' },
    { type: "tool_call_delta", index: 0, argsDelta: 'main.ts"}' },
    { type: "tool_call_start", index: 1, id: "call_B2", name: "grep" },
    { type: "tool_call_delta", index: 1, argsDelta: '{"pattern":"TODO","dir":"."}' },
    {
      type: "tool_call_end",
      index: 0,
      id: "call_A1",
      name: "read_file",
      args: { path: "src/main.ts" },
    },
    {
      type: "tool_call_end",
      index: 1,
      id: "call_B2",
      name: "grep",
      args: { pattern: "TODO", dir: "." },
    },
    {
      type: "usage",
      usage: { input_tokens: 2410, output_tokens: 41, cached_tokens: 2048, cost: 0.00343 },
    },
    { type: "message_stop", finishReason: "tool_calls", rawFinishReason: "tool_calls" },
  ]);
});

const REASONING_EVENTS: StreamEvent[] = [
  { type: "message_start", id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5" },
  { type: "thinking_delta", text: "The user wants " },
  { type: "thinking_delta", text: "a haiku — short." },
  {
    type: "thinking_delta",
    text: "",
    signature: JSON.stringify([{
      type: "reasoning.text",
      text: "The user wants a haiku — short.",
      format: "anthropic-claude-v1",
      index: 0,
      signature: "EqQBCkYIARgCIkD1sig==",
    }]),
  },
  { type: "text_delta", text: "Autumn moonlight —\n" },
  { type: "text_delta", text: "a worm digs silently 🌙" },
  {
    type: "usage",
    usage: { input_tokens: 52, output_tokens: 31, cached_tokens: 0, cost: 0.000621 },
  },
  { type: "message_stop", finishReason: "stop", rawFinishReason: "end_turn" },
];

Deno.test("reasoning then text yields thinking deltas, the merged reasoning_details as signature, text", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.reasoning));
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, REASONING_EVENTS);
});

Deno.test("a usage chunk repeating finish_reason yields one stop; usage rides on the last carrier", async () => {
  await using server = await fakeOpenRouter();
  const usage = usageChunk({ prompt_tokens: 7, completion_tokens: 2, cost: 0.25 });
  const billing = {
    ...usage,
    choices: [{ index: 0, delta: {}, finish_reason: "stop", native_finish_reason: "stop" }],
  };
  server.script(sseResponse(sse(
    chunk({ role: "assistant", content: "ok" }),
    chunk({ content: "" }, { finish_reason: "stop", native_finish_reason: "stop" }),
    billing,
    "[DONE]",
  )));
  assert.deepStrictEqual(await collect(adapter(server.url).stream(REQUEST)), [
    { type: "message_start", id: "gen-1764430000-test", model: "test/model" },
    { type: "text_delta", text: "ok" },
    { type: "usage", usage: { input_tokens: 7, output_tokens: 2, cached_tokens: 0, cost: 0.25 } },
    { type: "message_stop", finishReason: "stop", rawFinishReason: "stop" },
  ]);
});

Deno.test("a mid-stream error chunk at HTTP 200 keeps the partial output and ends with a provider error", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.midStreamError));
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, [
    { type: "message_start", id: "gen-1764430200-Zz9e", model: "qwen/qwen3-235b-a22b" },
    { type: "text_delta", text: "Here is the refactored" },
    {
      type: "error",
      error: {
        kind: "provider",
        message:
          "Cannot complete the model stream: provider error (502, provider_unavailable): Provider disconnected unexpectedly",
        retryable: true,
        status: 502,
      },
    },
  ]);
  assert.equal(server.requests.length, 1, "no retry once output has been streamed");
});

Deno.test("a mid-stream error before any output is retried with backoff", async () => {
  await using server = await fakeOpenRouter();
  const timing = recordingTiming({ random: 0.5 });
  server.script(
    sseResponse(sse(": OPENROUTER PROCESSING", {
      id: "gen-x",
      error: { code: "server_error", message: "Cold start" },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    })),
    sseResponse(textTurn("Warm now")),
  );
  const events = await collect(adapter(server.url, { timing }).stream(REQUEST));
  assert.deepStrictEqual(events.map((event) => event.type), [
    "message_start",
    "text_delta",
    "usage",
    "message_stop",
  ]);
  assert.deepStrictEqual(timing.sleeps, [375]);
  assert.equal(server.requests.length, 2);
});

Deno.test("429 with Retry-After waits what the server asks, then succeeds", async () => {
  await using server = await fakeOpenRouter();
  const timing = recordingTiming();
  server.script(
    jsonError(429, "Rate limit exceeded", {
      headers: { "retry-after": "7" },
      metadata: { error_type: "rate_limit_exceeded" },
    }),
    sseResponse(TRANSCRIPTS.plainText),
  );
  const logger = createMemoryLogger();
  const events = await collect(adapter(server.url, { timing, logger }).stream(REQUEST));
  assert.deepStrictEqual(events, PLAIN_EVENTS);
  assert.deepStrictEqual(timing.sleeps, [7_000]);
  assert.deepStrictEqual(logger.records, [{
    level: "warn",
    message: "Retrying model request",
    fields: {
      attempt: 2,
      attempts: 3,
      delay_ms: 7_000,
      reason: "Cannot stream from the model: HTTP 429: Rate limit exceeded (rate_limit_exceeded)",
    },
  }]);
});

Deno.test("a Retry-After holds the second request until the wait is over", async () => {
  await using server = await fakeOpenRouter();
  server.script(
    jsonError(429, "Slow down", { headers: { "retry-after": "1" } }),
    sseResponse(TRANSCRIPTS.plainText),
  );
  // A clock the test advances: the wait ends when the test says so, not after a real second.
  const waits: { ms: number; over: () => void }[] = [];
  const waiting = Promise.withResolvers<void>();
  const timing = {
    ...recordingTiming(),
    sleep(ms: number): Promise<void> {
      const { promise, resolve } = Promise.withResolvers<void>();
      waits.push({ ms, over: resolve });
      waiting.resolve();
      return promise;
    },
  };
  const events = collect(adapter(server.url, { timing }).stream(REQUEST));
  await waiting.promise;
  assert.deepStrictEqual([waits.map((wait) => wait.ms), server.requests.length], [[1_000], 1]);
  waits[0]!.over();
  assert.deepStrictEqual(await events, PLAIN_EVENTS);
  assert.equal(server.requests.length, 2);
});

Deno.test("an HTTP-date Retry-After on 503 is converted to a wait from now", async () => {
  await using server = await fakeOpenRouter();
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  const timing = recordingTiming({ now });
  server.script(
    jsonError(503, "No provider available", {
      headers: { "retry-after": "Wed, 21 Oct 2015 07:28:04 GMT" },
    }),
    sseResponse(TRANSCRIPTS.plainText),
  );
  assert.deepStrictEqual(
    await collect(adapter(server.url, { timing }).stream(REQUEST)),
    PLAIN_EVENTS,
  );
  assert.deepStrictEqual(timing.sleeps, [4_000]);
});

Deno.test("a Retry-After beyond the cap is not waited for: the error is reported, retryable", async () => {
  await using server = await fakeOpenRouter();
  const timing = recordingTiming();
  server.script(jsonError(429, "Quota exhausted", { headers: { "retry-after": "3600" } }));
  const events = await collect(adapter(server.url, { timing }).stream(REQUEST));
  assert.deepStrictEqual(events, [{
    type: "error",
    error: {
      kind: "http",
      message:
        "Cannot stream from the model: HTTP 429: Quota exhausted (the server asks to retry after 3600 s)",
      retryable: true,
      status: 429,
    },
  }]);
  assert.deepStrictEqual(timing.sleeps, []);
});

Deno.test("500 three times gives up after two jittered backoffs with an http error", async () => {
  await using server = await fakeOpenRouter();
  const timing = recordingTiming({ random: 0.5 });
  server.script(
    jsonError(500, "Internal Server Error"),
    jsonError(500, "Internal Server Error"),
    jsonError(500, "Internal Server Error"),
  );
  const events = await collect(adapter(server.url, { timing }).stream(REQUEST));
  assert.deepStrictEqual(events, [{
    type: "error",
    error: {
      kind: "http",
      message: "Cannot stream from the model: HTTP 500: Internal Server Error",
      retryable: true,
      status: 500,
    },
  }]);
  assert.deepStrictEqual(timing.sleeps, [375, 750]);
  assert.equal(server.requests.length, 3);
});

Deno.test("a non-retryable status is reported at once with the server's message", async () => {
  await using server = await fakeOpenRouter();
  server.script({
    status: 400,
    body: '{"error":{"code":400,"message":"context_length_exceeded: 210000 > 200000",' +
      '"metadata":{"error_type":"context_length_exceeded"}}}',
  });
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, [{
    type: "error",
    error: {
      kind: "http",
      message:
        "Cannot stream from the model: HTTP 400: context_length_exceeded: 210000 > 200000 (context_length_exceeded)",
      retryable: false,
      status: 400,
    },
  }]);
  assert.equal(server.requests.length, 1);
});

Deno.test("a connection dropped mid-stream after output ends with a network error, not retried", async () => {
  await using server = await fakeOpenRouter();
  const cut = TRANSCRIPTS.plainText.indexOf("data:", TRANSCRIPTS.plainText.indexOf("Hello"));
  server.script(sseResponse(TRANSCRIPTS.plainText.slice(0, cut), { end: "drop" }));
  const events = await collect(adapter(server.url).stream(REQUEST));
  assert.deepStrictEqual(events, [
    PLAIN_EVENTS[0],
    PLAIN_EVENTS[1],
    {
      type: "error",
      error: {
        kind: "network",
        message: "Cannot complete the model stream: error reading a body from connection",
        retryable: true,
      },
    },
  ]);
  assert.equal(server.requests.length, 1);
});

Deno.test("a connection dropped before any output is retried", async () => {
  await using server = await fakeOpenRouter();
  const timing = recordingTiming();
  server.script(
    sseResponse(": OPENROUTER PROCESSING\n\n", { end: "drop" }),
    sseResponse(TRANSCRIPTS.plainText),
  );
  assert.deepStrictEqual(
    await collect(adapter(server.url, { timing }).stream(REQUEST)),
    PLAIN_EVENTS,
  );
  assert.deepStrictEqual(timing.sleeps, [375]);
});

Deno.test("a body that ends cleanly without a finish reason is a retryable truncation", async () => {
  await using server = await fakeOpenRouter();
  const cut = TRANSCRIPTS.plainText.indexOf("data:", TRANSCRIPTS.plainText.indexOf("Hello"));
  server.script(sseResponse(TRANSCRIPTS.plainText.slice(0, cut)));
  const events = await collect(adapter(server.url, { retry: { maxRetries: 0 } }).stream(REQUEST));
  assert.deepStrictEqual(events.at(-1), {
    type: "error",
    error: {
      kind: "network",
      message:
        "Cannot complete the model stream: the connection closed before the response finished",
      retryable: true,
    },
  });
});

Deno.test("a finish reason without [DONE] still completes the message", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.plainText.replace("data: [DONE]\n\n", "")));
  assert.deepStrictEqual(await collect(adapter(server.url).stream(REQUEST)), PLAIN_EVENTS);
});

Deno.test("a refused connection is retried, then reported as a network error", async () => {
  // Nothing listens there, and no parallel test's listener is handed it meanwhile.
  const port = stablePort();
  const timing = recordingTiming();
  const events = await collect(
    adapter(`http://127.0.0.1:${port}/api/v1`, { timing, retry: { maxRetries: 1 } }).stream(
      REQUEST,
    ),
  );
  assert.equal(events.length, 1);
  const [event] = events;
  assert.equal(event!.type, "error");
  const error = (event as Extract<StreamEvent, { type: "error" }>).error;
  assert.equal(error.kind, "network");
  assert.equal(error.retryable, true);
  assert.match(
    error.message,
    /^Cannot stream from the model: cannot reach the server: .*Connection refused/,
  );
  assert.deepStrictEqual(timing.sleeps, [375]);
});

Deno.test("a server that stops sending times out with a retryable network error", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(": OPENROUTER PROCESSING\n\n", { end: "hold" }));
  const events = await collect(
    adapter(server.url, { timeoutMs: 150, retry: { maxRetries: 0 } }).stream(REQUEST),
  );
  assert.deepStrictEqual(events, [{
    type: "error",
    error: {
      kind: "network",
      message: "Cannot complete the model stream: no data for 0.15 s",
      retryable: true,
    },
  }]);
  assert.equal(await server.exchanges[0]!.ended, "client_closed");
});
