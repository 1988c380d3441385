/**
 * The adapter's stream under adversity: reads split at every byte offset, cancellation, malformed server input,
 * and the API key's secrecy.
 */
import assert from "node:assert/strict";
import { createMemoryLogger } from "@terret/hames";
import {
  chunk,
  type ExchangeEnd,
  fakeOpenRouter,
  jsonError,
  recordingTiming,
  sse,
  sseResponse,
  textTurn,
  TRANSCRIPTS,
} from "../../testing.ts";
import type { LlmRequest, StreamEvent } from "../vocabulary.ts";
import { OpenRouterAdapter } from "./adapter.ts";

const REQUEST: LlmRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }] };
const KEY = "sk-or-v1-f00dfacef00dfacef00dfacef00dface";

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A transport serving `bytes` as reads of exactly the given sizes (the rest in one last read). */
function splitTransport(bytes: Uint8Array, sizes: readonly number[]): () => Promise<Response> {
  return () => {
    let offset = 0;
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        const size = index < sizes.length ? sizes[index++]! : bytes.byteLength - offset;
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
      },
    });
    return Promise.resolve(new Response(body, { status: 200 }));
  };
}

/** A rich transcript: keepalives, reasoning, multi-byte text, two parallel calls, usage, with CRLF line ends. */
function richTranscript(): string {
  const tools = TRANSCRIPTS.parallelTools.split("\n").filter((line) => line.startsWith("data: {"))
    .slice(0, 5).map((line) => JSON.parse(line.slice(6)));
  const reasoning = TRANSCRIPTS.reasoning.split("\n").filter((line) => line.startsWith("data: {"))
    .slice(0, 5).map((line) => JSON.parse(line.slice(6)));
  return sse(
    ": OPENROUTER PROCESSING",
    ...reasoning,
    ...tools,
    chunk({}, { finish_reason: "tool_calls", native_finish_reason: "tool_use" }),
    {
      raw:
        'data: {"id":"u","choices":[],\r\ndata: "usage":{"prompt_tokens":9,"completion_tokens":4}}\r\n\r\n',
    },
    "[DONE]",
  );
}

Deno.test("reads split at every byte offset of a transcript yield identical events", async () => {
  const bytes = new TextEncoder().encode(richTranscript());
  const make = (sizes: readonly number[]): OpenRouterAdapter =>
    new OpenRouterAdapter({
      model: "m",
      apiKey: KEY,
      transport: splitTransport(bytes, sizes),
      timing: recordingTiming(),
    });
  const whole = await collect(make([]).stream(REQUEST));
  assert.deepStrictEqual(whole.map((event) => event.type), [
    "message_start",
    "thinking_delta",
    "thinking_delta",
    "thinking_delta",
    "text_delta",
    "text_delta",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_delta",
    "tool_call_start",
    "tool_call_delta",
    "tool_call_end",
    "tool_call_end",
    "usage",
    "message_stop",
  ]);
  assert.deepStrictEqual(whole.at(-2), {
    type: "usage",
    usage: { input_tokens: 9, output_tokens: 4 },
  });
  for (let offset = 1; offset < bytes.byteLength; offset++) {
    assert.deepStrictEqual(
      await collect(make([offset]).stream(REQUEST)),
      whole,
      `split at byte ${offset}`,
    );
  }
  assert.deepStrictEqual(
    await collect(make(new Array(bytes.byteLength).fill(1)).stream(REQUEST)),
    whole,
  );
  for (let seed = 1; seed <= 200; seed++) {
    const sizes: number[] = [];
    for (let total = 0, x = seed; total < bytes.byteLength;) {
      x = (x * 1103515245 + 12345) % 2147483648;
      const size = 1 + (x % 97);
      sizes.push(size);
      total += size;
    }
    assert.deepStrictEqual(
      await collect(make(sizes).stream(REQUEST)),
      whole,
      `random split, seed ${seed}`,
    );
  }
});

Deno.test("reads split over real HTTP (delayed writes) yield the same events as one read", async () => {
  await using server = await fakeOpenRouter();
  const transcript = TRANSCRIPTS.reasoning;
  const bytes = new TextEncoder().encode(transcript);
  const offsets = [1, 7, 23, 64, 150, 151, 152, 153, 400, bytes.byteLength - 3];
  server.script(sseResponse(transcript));
  for (const offset of offsets) {
    server.script(sseResponse(transcript, { chunks: [offset], delayMs: 5 }));
  }
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const whole = await collect(llm.stream(REQUEST));
  for (const offset of offsets) {
    assert.deepStrictEqual(await collect(llm.stream(REQUEST)), whole, `split at ${offset}`);
  }
  assert.equal(whole.length, 8);
});

Deno.test("an answer many times the read buffer arrives whole over real HTTP, multi-byte characters intact", async () => {
  await using server = await fakeOpenRouter();
  // 3,000 pieces of 40 characters, each with a 2-, 3- and 4-byte character: about 150 KB, so reads into the
  // stream's 16 KiB buffer end inside characters and inside events.
  const pieces = Array.from(
    { length: 3000 },
    (_, i) => `é€𝄞 piece ${String(i).padStart(4, "0")} of the long answer …\n`,
  );
  server.script(sseResponse(textTurn(pieces)));
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const events = await collect(llm.stream(REQUEST));
  const text = events.map((event) => event.type === "text_delta" ? event.text : "").join("");
  assert.equal(text, pieces.join(""));
  assert.deepStrictEqual(events.at(-1), {
    type: "message_stop",
    finishReason: "stop",
    rawFinishReason: "stop",
  });
  assert.equal(events.filter((event) => event.type === "text_delta").length, 3000);
});

/** Waits for `promise`, failing the test if it does not settle within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("aborting mid-stream closes the HTTP stream and ends with an aborted error", async () => {
  await using server = await fakeOpenRouter();
  const cut = TRANSCRIPTS.plainText.indexOf("data:", TRANSCRIPTS.plainText.indexOf("Hello"));
  server.script(sseResponse(TRANSCRIPTS.plainText.slice(0, cut), { end: "hold" }));
  const controller = new AbortController();
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const events: StreamEvent[] = [];
  for await (const event of llm.stream(REQUEST, { signal: controller.signal })) {
    events.push(event);
    if (event.type === "text_delta") controller.abort();
  }
  assert.deepStrictEqual(events.map((event) => event.type), [
    "message_start",
    "text_delta",
    "error",
  ]);
  assert.deepStrictEqual(events[2], {
    type: "error",
    error: {
      kind: "aborted",
      message: "Cannot complete the model stream: the request was aborted",
      retryable: false,
    },
  });
  const ended: ExchangeEnd = await within(
    server.exchanges[0]!.ended,
    2_000,
    "server saw the close",
  );
  assert.equal(ended, "client_closed");
});

Deno.test("aborting while waiting for response headers or a backoff ends at once", async () => {
  await using server = await fakeOpenRouter();
  const controller = new AbortController();
  server.script(jsonError(503, "Busy", { headers: { "retry-after": "30" } }));
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const stream = llm.stream(REQUEST, { signal: controller.signal });
  const pending = collect(stream);
  await server.waitForRequests(1);
  controller.abort();
  const events = await within(pending, 2_000, "the aborted stream ended");
  assert.deepStrictEqual(events.map((event) => event.type === "error" && event.error.kind), [
    "aborted",
  ]);
  assert.equal(server.requests.length, 1);
});

Deno.test("a signal aborted before the call makes no request", async () => {
  await using server = await fakeOpenRouter();
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const events = await collect(llm.stream(REQUEST, { signal: AbortSignal.abort() }));
  assert.deepStrictEqual(events.map((event) => event.type === "error" && event.error.kind), [
    "aborted",
  ]);
  assert.equal(server.requests.length, 0);
});

Deno.test("breaking out of the iteration closes the HTTP stream", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(TRANSCRIPTS.plainText, { end: "hold" }));
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  for await (const event of llm.stream(REQUEST)) {
    if (event.type === "message_start") break;
  }
  assert.equal(
    await within(server.exchanges[0]!.ended, 2_000, "server saw the close"),
    "client_closed",
  );
});

Deno.test("malformed server input ends the stream with an error event and never throws", async () => {
  await using server = await fakeOpenRouter();
  const bodies = [
    sse(chunk({ content: "a" }), { raw: "data: {oops\n\n" }),
    sse({ raw: "data: [1,2,3]\n\n" }),
    "this is not SSE at all",
    sse(chunk({ content: "a" }), { raw: 'data: {"choices":"nope"}\n\n' }, "[DONE]"),
  ];
  for (const body of bodies) server.script(sseResponse(body));
  const llm = new OpenRouterAdapter({
    model: "m",
    apiKey: KEY,
    baseUrl: server.url,
    retry: { maxRetries: 0 },
  });
  server.script({
    status: 200,
    headers: { "content-type": "application/json" },
    body: '{"error":"Bad gateway key"}',
  });
  const ends: string[] = [];
  for (const _ of [...bodies, "json"]) {
    const events = await collect(llm.stream(REQUEST));
    const last = events.at(-1)!;
    ends.push(last.type === "error" ? `${last.error.kind}: ${last.error.message}` : last.type);
  }
  assert.deepStrictEqual(ends, [
    `protocol: Cannot complete the model stream: invalid JSON in a data line (Expected property name or '}' in JSON at position 1 (line 1 column 2)): "{oops"`,
    'protocol: Cannot complete the model stream: a data line is not a JSON object: "[1,2,3]"',
    "network: Cannot complete the model stream: the response ended before any data",
    "message_stop",
    "protocol: Cannot stream from the model: expected an event stream, got JSON: Bad gateway key",
  ]);
});

Deno.test("the API key appears in no event, log record, or description of the adapter", async () => {
  await using server = await fakeOpenRouter();
  const echo = `Invalid key ${KEY} (Authorization: Bearer ${KEY})`;
  server.script(
    jsonError(500, echo),
    jsonError(401, echo),
    sseResponse(sse({ error: { code: 500, message: echo } })),
    sseResponse(sse({ error: { code: 400, message: echo } })),
  );
  const logger = createMemoryLogger();
  const llm = new OpenRouterAdapter({
    model: "m",
    apiKey: KEY,
    baseUrl: server.url,
    logger,
    timing: recordingTiming(),
  });
  const first = await collect(llm.stream(REQUEST));
  const second = await collect(llm.stream(REQUEST));
  const redacted = "Invalid key -REDACTED- (Authorization: Bearer -REDACTED-)";
  assert.deepStrictEqual(first, [{
    type: "error",
    error: {
      kind: "http",
      message: `Cannot stream from the model: HTTP 401: ${redacted}`,
      retryable: false,
      status: 401,
    },
  }]);
  assert.deepStrictEqual(second, [{
    type: "error",
    error: {
      kind: "provider",
      message: `Cannot complete the model stream: provider error (400): ${redacted}`,
      retryable: false,
      status: 400,
    },
  }]);
  assert.deepStrictEqual(logger.records.map((record) => record.fields.reason), [
    `Cannot stream from the model: HTTP 500: ${redacted}`,
    `Cannot complete the model stream: provider error (500): ${redacted}`,
  ]);
  const everything = JSON.stringify([first, second, logger.records]) + Deno.inspect(llm, {
    depth: 10,
    showHidden: true,
  }) + JSON.stringify(llm) + String(llm);
  assert.equal(everything.includes(KEY), false);
  assert.throws(
    () => new OpenRouterAdapter({ model: "", apiKey: KEY }),
    new TypeError("Cannot create the OpenRouter adapter: `model` must be a non-empty string"),
  );
});

Deno.test("one adapter's concurrent streams keep their own idle deadlines: a stalled one times out, a steady one ends", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse(": OPENROUTER PROCESSING\n\n", { end: "hold" }));
  // Eight pieces 25 ms apart: each wait a fortieth of the 1 s timeout, so a loaded machine's scheduling delays
  // cannot make the steady stream look stalled (the idle deadline itself is the behaviour under test: real time).
  const steady = TRANSCRIPTS.plainText;
  const size = Math.ceil(new TextEncoder().encode(steady).byteLength / 8);
  server.script(sseResponse(steady, { chunks: size, delayMs: 25 }));
  const llm = new OpenRouterAdapter({
    model: "m",
    apiKey: KEY,
    baseUrl: server.url,
    timeoutMs: 1000,
    retry: { maxRetries: 0 },
  });
  const stalled = collect(llm.stream(REQUEST));
  await server.waitForRequests(1);
  const [first, second] = await Promise.all([stalled, collect(llm.stream(REQUEST))]);
  assert.deepStrictEqual(first, [{
    type: "error",
    error: {
      kind: "network",
      message: "Cannot complete the model stream: no data for 1 s",
      retryable: true,
    },
  }]);
  assert.deepStrictEqual(second.map((event) => event.type), [
    "message_start",
    "text_delta",
    "text_delta",
    "usage",
    "message_stop",
  ]);
});

Deno.test("a consumer that pauses between events longer than the timeout does not trip it", async () => {
  await using server = await fakeOpenRouter();
  const cut = TRANSCRIPTS.plainText.indexOf("data:", TRANSCRIPTS.plainText.indexOf("Hello"));
  server.script(sseResponse(TRANSCRIPTS.plainText, { chunks: [cut], delayMs: 10 }));
  const llm = new OpenRouterAdapter({
    model: "m",
    apiKey: KEY,
    baseUrl: server.url,
    timeoutMs: 50,
  });
  const events: StreamEvent[] = [];
  for await (const event of llm.stream(REQUEST)) {
    events.push(event);
    // A slow consumer (a busy session log, a backed-up socket): longer than the idle timeout, on purpose.
    if (event.type === "message_start") await new Promise((resolve) => setTimeout(resolve, 120));
  }
  assert.deepStrictEqual(events.map((event) => event.type), [
    "message_start",
    "text_delta",
    "text_delta",
    "usage",
    "message_stop",
  ]);
});

Deno.test("one adapter's streams, one after another and at once, each read only their own bytes", async () => {
  await using server = await fakeOpenRouter();
  // A long answer, then shorter ones: a read buffer handed from one stream to the next must not show the old
  // bytes; then four at once, each with its own buffer.
  const texts = ["é".repeat(6000), "short", "", "x".repeat(20_000), "tiny", "a", "b", "c", "d"];
  for (const text of texts) server.script(sseResponse(textTurn(text === "" ? [] : [text])));
  const llm = new OpenRouterAdapter({ model: "m", apiKey: KEY, baseUrl: server.url });
  const said = (events: StreamEvent[]) =>
    events.flatMap((event) => event.type === "text_delta" ? [event.text] : []).join("");
  const ends = (events: StreamEvent[]) => events.at(-1)?.type;
  for (const text of texts.slice(0, 5)) {
    const events = await collect(llm.stream(REQUEST));
    assert.deepStrictEqual([said(events), ends(events)], [text, "message_stop"]);
  }
  const together = await Promise.all(texts.slice(5).map(() => collect(llm.stream(REQUEST))));
  assert.deepStrictEqual(together.map(said).sort(), ["a", "b", "c", "d"]);
  // A stream aborted while a read waits on its buffer: the next stream still reads.
  const slow = textTurn(["first", "second"]);
  const cut =
    new TextEncoder().encode(slow.slice(0, slow.indexOf("\n\n", slow.indexOf("first")) + 2))
      .byteLength;
  server.script(sseResponse(slow, { chunks: [cut], delayMs: 60_000 }));
  server.script(sseResponse(textTurn("after")));
  const controller = new AbortController();
  const events: StreamEvent[] = [];
  for await (const event of llm.stream(REQUEST, { signal: controller.signal })) {
    events.push(event);
    if (event.type === "text_delta") controller.abort(new Error("enough"));
  }
  assert.deepStrictEqual(events.map((event) => event.type), [
    "message_start",
    "text_delta",
    "error",
  ]);
  const after = await collect(llm.stream(REQUEST));
  assert.deepStrictEqual([said(after), ends(after)], ["after", "message_stop"]);
});
