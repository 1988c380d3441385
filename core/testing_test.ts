import assert from "node:assert/strict";
import {
  fakeOpenRouter,
  jsonError,
  recordingTiming,
  sse,
  sseResponse,
  textTurn,
} from "./testing.ts";

async function reads(response: Response): Promise<string[]> {
  const out: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) out.push(decoder.decode(chunk, { stream: true }));
  return out;
}

Deno.test("fakeOpenRouter serves scripts in order, records requests, and refuses unscripted ones", async () => {
  await using server = await fakeOpenRouter();
  server.script(
    sseResponse("data: 1\n\n"),
    (request) => jsonError(418, `saw ${(request.body as { n: number }).n}`),
  );
  const post = (n: number): Promise<Response> =>
    fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-title": "t" },
      body: JSON.stringify({ n }),
    });
  const first = await post(1);
  assert.equal(first.headers.get("content-type"), "text/event-stream");
  assert.equal(await first.text(), "data: 1\n\n");
  const second = await post(2);
  assert.equal(second.status, 418);
  assert.deepStrictEqual(await second.json(), { error: { code: 418, message: "saw 2" } });
  const third = await post(3);
  assert.equal(third.status, 400);
  assert.deepStrictEqual(await third.json(), {
    error: {
      code: 400,
      message: "fakeOpenRouter: no response scripted for request 3 (POST /api/v1/chat/completions)",
    },
  });
  assert.deepStrictEqual(
    server.requests.map((request) => [request.path, request.body, request.headers["x-title"]]),
    [
      ["/api/v1/chat/completions", { n: 1 }, "t"],
      ["/api/v1/chat/completions", { n: 2 }, "t"],
      ["/api/v1/chat/completions", { n: 3 }, "t"],
    ],
  );
  assert.deepStrictEqual(await Promise.all(server.exchanges.map((exchange) => exchange.ended)), [
    "completed",
    "completed",
    "completed",
  ]);
});

Deno.test("fakeOpenRouter writes the body in the scripted pieces, delayed apart", async () => {
  await using server = await fakeOpenRouter();
  server.script(sseResponse("abcdefghij", { chunks: [3, 4], delayMs: 20 }));
  const response = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{}" });
  const pieces = await reads(response);
  assert.equal(pieces.join(""), "abcdefghij");
  // TCP may coalesce pieces a slow reader has not taken yet, but never splits inside one here.
  const ends = pieces.map((_, i) => pieces.slice(0, i + 1).join("").length);
  assert.deepStrictEqual(ends.filter((end) => ![3, 7, 10].includes(end)), []);
});

Deno.test("fakeOpenRouter drops a connection, and ends held responses when it closes", async () => {
  const server = await fakeOpenRouter();
  server.script(
    sseResponse("data: x\n\n", { end: "drop" }),
    sseResponse("data: y\n\n", { end: "hold" }),
  );
  const dropped = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{}" });
  await assert.rejects(dropped.text(), new TypeError("error reading a body from connection"));
  const held = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{}" });
  const text = held.text();
  await server.waitForRequests(2);
  await server.close();
  assert.equal(await text, "data: y\n\n");
  assert.deepStrictEqual(await Promise.all(server.exchanges.map((exchange) => exchange.ended)), [
    "dropped",
    "completed",
  ]);
});

Deno.test("fakeOpenRouter.waitForRequests() fails after its deadline", async () => {
  await using server = await fakeOpenRouter();
  await assert.rejects(
    server.waitForRequests(1, { timeoutMs: 20 }),
    new Error("fakeOpenRouter: fewer than 1 requests after 20 ms"),
  );
});

Deno.test("sse() and textTurn() build OpenRouter-shaped transcripts", () => {
  assert.equal(
    sse(": ping", { a: 1 }, { raw: "event: x\n\n" }, "[DONE]"),
    ': ping\n\ndata: {"a":1}\n\nevent: x\n\ndata: [DONE]\n\n',
  );
  assert.throws(
    () => sse("oops"),
    new TypeError('Cannot encode SSE item "oops": use "[DONE]", ": comment" or { raw }'),
  );
  const lines = textTurn(["a", "b"], { keepalive: false }).split("\n\n").filter(Boolean);
  assert.equal(lines.length, 5);
  assert.equal(lines.at(-1), "data: [DONE]");
});

Deno.test("recordingTiming() records sleeps without waiting", async () => {
  const timing = recordingTiming({ random: 0.25, now: 5 });
  await timing.sleep(60_000);
  await timing.sleep(1);
  assert.deepStrictEqual(timing.sleeps, [60_000, 1]);
  assert.deepStrictEqual([timing.random(), timing.now()], [0.25, 5]);
});
