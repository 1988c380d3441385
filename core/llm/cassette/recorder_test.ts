import assert from "node:assert/strict";
import { createContext, Loader } from "@terret/hames";
import { fakeOpenRouter, jsonError, sseResponse, TRANSCRIPTS } from "../../testing.ts";
import { Llm, LlmRegistry } from "../llm_registry.ts";
import { openRouterLlm } from "../openrouter/plugin.ts";
import type { LlmRequest, StreamEvent } from "../vocabulary.ts";
import { parseCassette, requestKey } from "./cassette.ts";
import { llmRecorder } from "./recorder.ts";
import { stablePort } from "../../../tests/ports.ts";

const KEY = "sk-or-v1-recorder-secret-4242";
const REQUEST: LlmRequest = {
  system: "Be brief.",
  messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }],
};

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("llmRecorder writes each request's HTTP attempts, raw bytes and events to the cassette", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-cassette-" });
  try {
    const path = `${dir}/session.jsonl`;
    await using server = await fakeOpenRouter();
    server.script(
      jsonError(429, "Slow down", { headers: { "retry-after": "0" } }),
      sseResponse(TRANSCRIPTS.plainText),
      sseResponse(TRANSCRIPTS.plainText.slice(0, 400), { end: "drop" }),
    );
    const ctx = createContext({ mode: "test" });
    await new Loader(ctx).load([
      { id: "llm", plugin: LlmRegistry },
      {
        id: "llm.main",
        plugin: openRouterLlm,
        config: { model: "m", api_key: KEY, base_url: server.url },
      },
      { id: "llm.recorder", plugin: llmRecorder, config: { path } },
    ]);
    const first = await collect(ctx.get(Llm).stream(REQUEST));
    const second = await collect(ctx.get(Llm).stream(REQUEST, { role: "titler" }));
    await ctx.dispose();

    const text = await Deno.readTextFile(path);
    assert.equal(text.includes(KEY), false, "the API key must not reach the cassette");
    const cassette = parseCassette(text, path);
    assert.equal(cassette.interactions.length, 2);
    const [one, two] = cassette.interactions;
    assert.equal(one!.key, requestKey("main", REQUEST));
    assert.deepStrictEqual(one!.request, REQUEST);
    assert.deepStrictEqual(one!.events, first);
    assert.deepStrictEqual(two!.role, "titler");
    assert.deepStrictEqual(two!.events, second);
    const url = `${server.url}/chat/completions`;
    const body = {
      stream_options: { include_usage: true },
      model: "m",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }],
      stream: true,
    };
    const [refused, served] = one!.exchanges;
    assert.deepStrictEqual({ ...refused, reads: undefined }, {
      method: "POST",
      url,
      request_body: body,
      status: 429,
      headers: { "content-type": "application/json", "retry-after": "0" },
      body: '{"error":{"code":429,"message":"Slow down"}}',
      reads: undefined,
      end: "complete",
    });
    assert.deepStrictEqual({ ...served, reads: undefined }, {
      method: "POST",
      url,
      request_body: body,
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: TRANSCRIPTS.plainText,
      reads: undefined,
      end: "open",
    });
    const size = new TextEncoder().encode(TRANSCRIPTS.plainText).byteLength;
    assert.equal(served!.reads!.reduce((a, b) => a + b, 0), size);
    assert.deepStrictEqual({ ...two!.exchanges[0], reads: undefined, request_body: undefined }, {
      method: "POST",
      url,
      request_body: undefined,
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: TRANSCRIPTS.plainText.slice(0, 400),
      reads: undefined,
      end: "dropped",
      error: "error reading a body from connection",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("llmRecorder records a refused connection and bodies that are not UTF-8", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-cassette-" });
  try {
    const path = `${dir}/odd.jsonl`;
    await using server = await fakeOpenRouter();
    server.script({ status: 500, body: new Uint8Array([0xff, 0xfe, 0x41]) });
    const dead = `http://127.0.0.1:${stablePort()}/api/v1`;
    const ctx = createContext({ mode: "test" });
    await new Loader(ctx).load([
      { id: "llm", plugin: LlmRegistry },
      {
        id: "llm.main",
        plugin: openRouterLlm,
        config: { model: "m", api_key: KEY, base_url: server.url, max_retries: 0 },
      },
      {
        id: "llm.titler",
        plugin: openRouterLlm,
        config: { role: "titler", model: "m", api_key: KEY, base_url: dead, max_retries: 0 },
      },
      { id: "llm.recorder", plugin: llmRecorder, config: { path } },
    ]);
    await collect(ctx.get(Llm).stream(REQUEST));
    await collect(ctx.get(Llm).stream(REQUEST, { role: "titler" }));
    await ctx.dispose();
    const [binary, refused] = parseCassette(await Deno.readTextFile(path), path).interactions;
    assert.equal(binary!.exchanges[0]!.body_base64, "//5B");
    assert.equal(binary!.exchanges[0]!.body, undefined);
    const { error, status } = refused!.exchanges[0]!;
    assert.match(error!, /^fetch failed|Connection refused/);
    assert.equal(status, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
