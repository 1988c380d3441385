// deno-lint-ignore-file no-console
/**
 * Model stream parsing benchmark: events per second over a 10 MB OpenRouter-shaped SSE stream (keepalives,
 * reasoning deltas with `reasoning_details`, text deltas with multi-byte characters, two interleaved parallel tool
 * calls, a finish, the usage chunk, `[DONE]`), delivered as 16 KiB network reads, for:
 *
 * - the raw floor: decode the whole buffer, split on blank lines, `JSON.parse` each data payload;
 * - `OpenRouterAdapter.stream()` (SSE framing, chunk decoding into stream events, retry wrapper, async iteration);
 * - the `openai` npm package's stream parser (`Stream.fromSSEResponse` over a `Response`, JSON items only).
 *
 * "Events" are SSE data payloads, the same count for all three. Prints each rate (best of several rounds) and the
 * ratios in one run.
 *
 * Run: deno run -A bench/llm_stream_parse.ts [--quick]
 *
 * @module
 */
import { Stream } from "npm:openai@^7.59.0/streaming";
import { OpenRouterAdapter, type StreamEvent } from "@terret/core";
import { chunk, sse, usageChunk } from "@terret/core/testing";

const quick = Deno.args.includes("--quick");
const TARGET_BYTES = quick ? 2_000_000 : 10_000_000;
const ROUNDS = quick ? 3 : 7;
const READ_SIZE = 16 * 1024;

function transcript(): { bytes: Uint8Array; payloads: number } {
  const base = {
    id: "gen-1764430000-k3Xq",
    model: "anthropic/claude-sonnet-4.5",
    provider: "Anthropic",
  };
  const parts: string[] = [sse(": OPENROUTER PROCESSING", ": OPENROUTER PROCESSING")];
  let size = parts[0]!.length;
  let payloads = 0;
  const push = (item: object | string): void => {
    const text = sse(item);
    parts.push(text);
    size += text.length;
    if (typeof item !== "string") payloads++;
  };
  for (let i = 0; size < TARGET_BYTES * 0.15; i++) {
    const text = `step ${i}: weigh the options — `;
    push(chunk({
      role: "assistant",
      content: "",
      reasoning: text,
      reasoning_details: [{
        type: "reasoning.text",
        text,
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, base));
  }
  for (let i = 0; size < TARGET_BYTES * 0.9; i++) {
    if (i % 500 === 0) push(": OPENROUTER PROCESSING");
    push(chunk({ role: "assistant", content: ` word${i} café naïve 🙂` }, base));
  }
  for (const index of [0, 1]) {
    const call = {
      index,
      id: `call_${index}`,
      type: "function",
      function: { name: "Read", arguments: "" },
    };
    push(chunk({ role: "assistant", content: null, tool_calls: [call] }, base));
  }
  for (let i = 0; size < TARGET_BYTES; i++) {
    const fragment = {
      index: i % 2,
      function: { arguments: i < 2 ? '{"file_path":"' : `src/${i}/` },
    };
    push(chunk({ tool_calls: [fragment] }, base));
  }
  for (const index of [0, 1]) {
    push(chunk({ tool_calls: [{ index, function: { arguments: 'a.ts"}' } }] }, base));
  }
  push(chunk({}, { ...base, finish_reason: "tool_calls", native_finish_reason: "tool_use" }));
  push(
    usageChunk(
      { prompt_tokens: 1830, completion_tokens: 90_000, cost: 1.35, cached_tokens: 1536 },
      base,
    ),
  );
  parts.push(sse("[DONE]"));
  return { bytes: new TextEncoder().encode(parts.join("")), payloads };
}

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
  for await (const event of llm.stream({ messages: [] })) {
    events++;
    last = event;
  }
  return { events, last };
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

async function best(
  name: string,
  run: () => Promise<number> | number,
  expected: number,
): Promise<number> {
  let rate = 0;
  await run();
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    const count = await run();
    const seconds = (performance.now() - start) / 1000;
    if (count !== expected) {
      throw new Error(`${name}: counted ${count} events, expected ${expected}`);
    }
    rate = Math.max(rate, count / seconds);
  }
  return rate;
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
    `(${check.events.toLocaleString("en-US")} stream events), ${
      READ_SIZE / 1024
    } KiB reads, best of ${ROUNDS}`,
);
const rates = {
  floor: await best("floor", () => floor(bytes), payloads),
  adapter: await best("adapter", async () => {
    const result = await adapter(bytes);
    return result.last?.type === "message_stop" ? payloads : -1;
  }, payloads),
  openai: await best("openai", () => openai(bytes), payloads),
};
const width = 58;
const row = (name: string, rate: number): string =>
  `${name.padEnd(width)}${Math.round(rate).toLocaleString("en-US").padStart(12)} events/s`;
console.log(row("raw floor (split on blank lines + JSON.parse)", rates.floor));
console.log(row("OpenRouterAdapter.stream (eventsource-parser)", rates.adapter));
console.log(row("openai Stream.fromSSEResponse", rates.openai));
console.log(`adapter / floor:  ${(rates.adapter / rates.floor).toFixed(2)}x (target >= 0.90x)`);
console.log(`adapter / openai: ${(rates.adapter / rates.openai).toFixed(2)}x`);
console.log(`floor / openai:   ${(rates.floor / rates.openai).toFixed(2)}x`);
