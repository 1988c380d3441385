// deno-lint-ignore-file no-console
/**
 * Model stream parsing benchmark: events per second over one 10 MB OpenRouter SSE stream (a long answer:
 * keepalives, reasoning deltas with `reasoning_details` and a signature, text deltas with multi-byte characters, two
 * parallel tool calls with interleaved argument fragments, the finish, the usage chunk, `[DONE]`), delivered as
 * 16 KiB network reads, for:
 *
 * - the raw floor: decode the whole stream, split on blank lines, `JSON.parse` each data payload;
 * - `OpenRouterAdapter.stream()` (SSE framing, chunk decoding into stream events, tool arguments parsed, the retry
 *   wrapper, async iteration);
 * - the `openai` npm package's stream parser (`Stream.fromSSEResponse` over a `Response`, JSON items only).
 *
 * It also measures SSE framing alone (plus `JSON.parse`): Terret's `SseDecoder`, the same decoder with
 * `eventsource-parser` as its text parser, and `eventsource-parser` behind a streaming `TextDecoder` as its README
 * shows (the evidence for shipping our own parser and UTF-8 handling); the adapter's fixed cost per request; and the
 * cancellation latency, from `abort()` to the fake server seeing its response stream closed, over real HTTP.
 *
 * "Events" are SSE data payloads, the same count for every parser. Rounds are interleaved (each round runs every
 * contender once, in an order rotated every round). Each contender's median round gives its rate; ratios are the
 * medians of per-round paired ratios, which load from other processes barely moves. The fixed cost per request is
 * the median of 5 rounds.
 *
 * Run: deno run -A bench/llm_stream_parse.ts [--quick]
 *
 * @module
 */
import { Stream } from "npm:openai@^7.59.0/streaming";
import { createParser } from "npm:eventsource-parser@^4.1.3";
import { OpenRouterAdapter, SseDecoder } from "@terret/core/llm";
import type { StreamEvent } from "@terret/core";
import { chunk, fakeOpenRouter, sse, sseResponse, usageChunk } from "@terret/core/testing";

const quick = Deno.args.includes("--quick");
const REQUEST = { messages: [] };
const TARGET_BYTES = quick ? 2_000_000 : 10_000_000;
const ROUNDS = quick ? 3 : 15;
const READ_SIZE = 16 * 1024;

/**
 * One long answer, as OpenRouter streams it: keepalives, 300 reasoning deltas with `reasoning_details` and a
 * signature, text deltas with multi-byte characters up to the target size (a keepalive every 500), two parallel
 * tool calls with 40 interleaved argument fragments, the finish, the usage chunk, `[DONE]`.
 */
function transcript(): { bytes: Uint8Array; payloads: number } {
  const base = {
    id: "gen-1764430000-k3Xq",
    model: "anthropic/claude-sonnet-4.5",
    provider: "Anthropic",
  };
  const parts: string[] = [];
  let size = 0;
  let payloads = 0;
  const push = (item: object | string): void => {
    const text = sse(item);
    parts.push(text);
    size += text.length;
    if (typeof item !== "string") payloads++;
  };
  push(": OPENROUTER PROCESSING");
  for (let i = 0; i < 300; i++) {
    const text = `step ${i}: weigh the options — `;
    const detail = { type: "reasoning.text", text, format: "anthropic-claude-v1", index: 0 };
    push(
      chunk({ role: "assistant", content: "", reasoning: text, reasoning_details: [detail] }, base),
    );
  }
  const signature = {
    type: "reasoning.text",
    signature: "ErUBCkYIBhgCIkCm3s7dYF0mL2kqJ8w==",
    index: 0,
  };
  push(chunk({ role: "assistant", content: "", reasoning_details: [signature] }, base));
  for (let i = 0; size < TARGET_BYTES - 20_000; i++) {
    if (i % 500 === 499) push(": OPENROUTER PROCESSING");
    push(chunk({ role: "assistant", content: ` word${i} café naïve 🙂` }, base));
  }
  for (const index of [0, 1]) {
    const call = {
      index,
      id: `toolu_${index}`,
      type: "function",
      function: { name: "Write", arguments: "" },
    };
    push(chunk({ role: "assistant", content: null, tool_calls: [call] }, base));
  }
  for (let i = 0; i < 40; i++) {
    const piece = i === 0
      ? '{"file_path":"/w/a.ts","content":"'
      : i === 39
      ? 'end"}'
      : `line ${i}\\n`;
    push(chunk({ tool_calls: [{ index: i % 2, function: { arguments: piece } }] }, base));
    if (i === 0) push(chunk({ tool_calls: [{ index: 1, function: { arguments: piece } }] }, base));
  }
  push(chunk({ tool_calls: [{ index: 0, function: { arguments: 'end"}' } }] }, base));
  push(chunk({}, { ...base, finish_reason: "tool_calls", native_finish_reason: "tool_use" }));
  push(
    usageChunk({
      prompt_tokens: 18_300,
      completion_tokens: 90_000,
      cost: 1.4049,
      cached_tokens: 15_360,
    }, base),
  );
  push("[DONE]");
  return { bytes: new TextEncoder().encode(parts.join("")), payloads };
}

/** A response body delivering `bytes` as reads of `READ_SIZE`. */
function body(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + READ_SIZE));
      offset += READ_SIZE;
    },
  });
}

function floor(bytes: Uint8Array): number {
  const text = new TextDecoder().decode(bytes);
  let count = 0;
  for (const block of text.split("\n\n")) {
    if (block.startsWith("data: ") && block !== "data: [DONE]") {
      JSON.parse(block.slice(6));
      count++;
    }
  }
  return count;
}

async function adapter(
  bytes: Uint8Array,
): Promise<{ events: number; last: StreamEvent | undefined }> {
  const llm = new OpenRouterAdapter({
    model: "anthropic/claude-sonnet-4.5",
    apiKey: "sk-bench",
    baseUrl: "http://bench.invalid/api/v1",
    transport: () => Promise.resolve(new Response(body(bytes), { status: 200 })),
  });
  let events = 0;
  let last: StreamEvent | undefined;
  for await (const event of llm.stream(REQUEST)) {
    events++;
    last = event;
  }
  return { events, last };
}

/** Microseconds of fixed cost per request: a one-chunk stream through the adapter, over and over. */
async function requestOverhead(requests: number): Promise<number> {
  const tiny = new TextEncoder().encode(sse(chunk({ content: "x" }), "[DONE]"));
  const llm = new OpenRouterAdapter({
    model: "m",
    apiKey: "sk-bench",
    transport: () => Promise.resolve(new Response(body(tiny), { status: 200 })),
  });
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < requests; i++) for await (const _event of llm.stream(REQUEST));
    rounds.push((performance.now() - start) * 1000 / requests);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

async function openai(bytes: Uint8Array): Promise<number> {
  const stream = Stream.fromSSEResponse<unknown>(
    new Response(body(bytes), { status: 200 }),
    new AbortController(),
  );
  let count = 0;
  for await (const _item of stream) count++;
  return count;
}

/** SSE framing plus `JSON.parse` of each payload over the same reads: the parser Terret ships. */
function ownFraming(bytes: Uint8Array): number {
  let count = 0;
  const decoder = new SseDecoder((data) => {
    if (data !== "[DONE]") {
      JSON.parse(data);
      count++;
    }
  });
  for (let offset = 0; offset < bytes.byteLength; offset += READ_SIZE) {
    decoder.push(bytes.subarray(offset, offset + READ_SIZE));
  }
  decoder.end();
  return count;
}

/** The same framing with `eventsource-parser` in place of Terret's `SseParser` (same UTF-8 handling). */
function esParserFraming(bytes: Uint8Array): number {
  let count = 0;
  const decoder = new SseDecoder((data) => {
    if (data !== "[DONE]") {
      JSON.parse(data);
      count++;
    }
  }, {
    parser: (onMessage) => {
      const parser = createParser({ onEvent: (event) => onMessage(event.data, event.event) });
      return { feed: (text) => parser.feed(text), end: () => parser.reset() };
    },
  });
  for (let offset = 0; offset < bytes.byteLength; offset += READ_SIZE) {
    decoder.push(bytes.subarray(offset, offset + READ_SIZE));
  }
  decoder.end();
  return count;
}

/** `eventsource-parser` as its README uses it: behind a streaming `TextDecoder`. */
function esParserStreaming(bytes: Uint8Array): number {
  let count = 0;
  const text = new TextDecoder();
  const parser = createParser({
    onEvent(event) {
      if (event.data !== "[DONE]") {
        JSON.parse(event.data);
        count++;
      }
    },
  });
  for (let offset = 0; offset < bytes.byteLength; offset += READ_SIZE) {
    parser.feed(text.decode(bytes.subarray(offset, offset + READ_SIZE), { stream: true }));
  }
  return count;
}

/** Milliseconds from `abort()` to the server seeing its response stream closed, over real HTTP. */
async function cancelLatency(trials: number): Promise<number[]> {
  await using server = await fakeOpenRouter();
  const llm = new OpenRouterAdapter({ model: "m", apiKey: "sk-bench", baseUrl: server.url });
  const latencies: number[] = [];
  for (let i = 0; i < trials; i++) {
    server.script(sseResponse(sse(chunk({ content: "first" })), { end: "hold" }));
    const controller = new AbortController();
    let aborted = 0;
    for await (const event of llm.stream({ messages: [] }, { signal: controller.signal })) {
      if (event.type === "text_delta") {
        aborted = performance.now();
        controller.abort();
      }
    }
    await server.exchanges[i]!.ended;
    latencies.push(performance.now() - aborted);
  }
  return latencies.sort((a, b) => a - b);
}

const { bytes, payloads } = transcript();
const check = await adapter(bytes);
if (check.last?.type !== "message_stop") {
  throw new Error(`adapter did not finish cleanly: ${JSON.stringify(check.last)}`);
}
console.log(
  `stream: ${(bytes.byteLength / 1e6).toFixed(1)} MB, ${
    payloads.toLocaleString("en-US")
  } data events ` +
    `(${check.events.toLocaleString("en-US")} stream events), ${READ_SIZE / 1024} KiB reads, ` +
    `${ROUNDS} interleaved rounds`,
);

const runs: Record<string, () => Promise<number> | number> = {
  floor: () => floor(bytes),
  adapter: async () => (await adapter(bytes)).last?.type === "message_stop" ? payloads : -1,
  openai: () => openai(bytes),
  own: () => ownFraming(bytes),
  esParser: () => esParserFraming(bytes),
  esStreaming: () => esParserStreaming(bytes),
};
const rates: Record<string, number> = {};
const seconds: Record<string, number[]> = {};
for (const run of Object.values(runs)) await run();
const contenders = Object.entries(runs);
for (let round = 0; round < ROUNDS; round++) {
  // Rotate the order every round, so no contender always runs after the same neighbour's garbage.
  const order = [
    ...contenders.slice(round % contenders.length),
    ...contenders.slice(0, round % contenders.length),
  ];
  for (const [name, run] of order) {
    const start = performance.now();
    const count = await run();
    const elapsed = (performance.now() - start) / 1000;
    if (count !== payloads) {
      throw new Error(`${name}: counted ${count} events, expected ${payloads}`);
    }
    (seconds[name] ??= []).push(elapsed);
  }
}
for (const [name, elapsed] of Object.entries(seconds)) {
  const sorted = [...elapsed].sort((x, y) => x - y);
  rates[name] = payloads / sorted[Math.floor(sorted.length / 2)]!;
}
/** The median over rounds of `a`'s rate over `b`'s in the same round (paired, so load shifts cancel out). */
function pairedRatio(a: string, b: string): number {
  const ratios = seconds[a]!.map((elapsed, round) => seconds[b]![round]! / elapsed).sort((x, y) =>
    x - y
  );
  return ratios[Math.floor(ratios.length / 2)]!;
}
const width = 64;
const row = (name: string, rate: number): string =>
  `${name.padEnd(width)}${Math.round(rate).toLocaleString("en-US").padStart(12)} events/s`;
console.log(row("raw floor (split on blank lines + JSON.parse)", rates.floor!));
console.log(row("OpenRouterAdapter.stream (full path, stream events out)", rates.adapter!));
console.log(row("openai Stream.fromSSEResponse", rates.openai!));
console.log(row("SSE framing + JSON.parse: Terret SseDecoder", rates.own!));
console.log(row("SSE framing + JSON.parse: SseDecoder with eventsource-parser", rates.esParser!));
console.log(
  row("SSE framing + JSON.parse: eventsource-parser, streaming decode", rates.esStreaming!),
);
const ratio = (a: string, b: string): string =>
  `${pairedRatio(a, b).toFixed(2)}x (median of per-round ratios)`;
console.log(`adapter / floor:  ${ratio("adapter", "floor")} (target >= 0.90x)`);
console.log(`adapter / openai: ${ratio("adapter", "openai")}`);
console.log(`floor / openai:   ${ratio("floor", "openai")}`);
console.log(`SseParser / eventsource-parser (same decoding): ${ratio("own", "esParser")}`);
console.log(`SseDecoder / eventsource-parser as documented: ${ratio("own", "esStreaming")}`);
console.log(
  `fixed cost per request (build, send, a one-chunk stream): ${
    (await requestOverhead(quick ? 200 : 2_000)).toFixed(1)
  } µs`,
);
const latencies = await cancelLatency(quick ? 5 : 20);
const median = latencies[Math.floor(latencies.length / 2)]!;
console.log(
  `abort -> server sees the stream closed: median ${median.toFixed(1)} ms, max ${
    latencies.at(-1)!.toFixed(1)
  } ms ` +
    `over ${latencies.length} real HTTP streams (target < 100 ms)`,
);
