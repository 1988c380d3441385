/**
 * Durable input through a real `trt serve`: a `message` acked while the agent's turn waits on the model is durable
 * (`input/queued`) before the ack; after kill -9 the next process claims it exactly once, on its own at start
 * (no client needed), and the claiming `user/message` names it by `queued_seq`.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { fakeOpenRouter, sseResponse, textTurn } from "@terret/core/testing";
import { within, WsClient } from "./_clients.ts";
import { serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

Deno.test("a message acked before kill -9 is durable and claimed exactly once by the next process", async () => {
  await using model = await fakeOpenRouter();
  // The first request never answers: the turn is in its model call when the second message arrives.
  model.script({ body: ": OPENROUTER PROCESSING\n\n", end: "hold" });
  await using tree = await writeTree({
    "serve.yml": [
      "rows:",
      "  - id: sandbox",
      "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
      "  - id: llm.main",
      `    config: { model: test/model, base_url: "${model.url}", api_key: sk-or-test-key, max_retries: 0 }`,
      // The fake model scripts the turns' requests only: no title call.
      "  - id: titles",
      "    config: { auto: false }",
      "  - id: interfaces.ws",
      "    config: { port: 0, token_file: ws/token, dir: !setting terret.home }",
      "",
    ].join("\n"),
  });
  const first = await serve(tree.dir, [tree.path("serve.yml")]);
  const token = (await Deno.readTextFile(tree.path("ws/token"))).trim();
  const url = (port: number): string => `ws://127.0.0.1:${port}/v1/agents/keeper/stream`;
  let client: WsClient | undefined;
  try {
    client = await WsClient.open(url(first.port), { token });
    assert.deepStrictEqual(await client.next(), {
      type: "hello",
      protocol: 1,
      agent_id: "keeper",
      session_id: "keeper",
      head_seq: 0,
    });
    client.send({ type: "subscribe", from_seq: 1, ref: "s" });
    client.send({ type: "message", content: "One", ref: "m1" });
    await model.waitForRequests(1, { timeoutMs: 30_000 });
    client.send({ type: "message", content: "Two", ref: "m2" });
    await client.readUntil((frame) => frame.type === "ack" && frame.ref === "m2", 30_000);
  } finally {
    // No SIGTERM: the process dies with the second message acked and unclaimed.
    await first.kill();
    await client?.closed;
  }
  // Answers and events are separate flows (docs/protocol.md §5): each is checked exactly on its own. Every
  // frame was acked, and the events that reached the client before the kill are the log's, in order (the pump
  // may not have sent the last ones); the restart below proves the acked "Two" (seq 6) was durable.
  assert.deepStrictEqual(
    client.frames.filter((frame) => frame.type === "ack").map((frame) => frame.ref),
    ["s", "m1", "m2"],
  );
  const seen = client.frames.filter((frame) => frame.type === "event").map((frame) => [
    (frame.event as SessionEvent).seq,
    (frame.event as SessionEvent).type,
  ]);
  const logged = [
    [1, "session/created"],
    [2, "input/queued"],
    [3, "turn/start"],
    [4, "step/start"],
    [5, "user/message"],
    [6, "input/queued"],
  ];
  assert.deepStrictEqual(seen, logged.slice(0, seen.length));

  model.script(
    sseResponse(textTurn("First answer.")),
    sseResponse(textTurn("Second answer.")),
  );
  const second = await serve(tree.dir, [tree.path("serve.yml")]);
  try {
    // No client yet: the process claims the queued input on its own.
    await model.waitForRequests(3, { timeoutMs: 30_000 });
    const watcher = await WsClient.open(url(second.port), { token });
    try {
      await watcher.next();
      watcher.send({ type: "subscribe", from_seq: 1 });
      const frames = await within(
        (async () => {
          for (;;) {
            const got = await watcher.readUntil(isTurnEnd, 30_000);
            if (got.some(isTurnEnd)) return watcher.frames;
          }
        })(),
        30_000,
        "the recovered turn to end",
      );
      const events = frames.filter((frame) => frame.type === "event").map((frame) =>
        frame.event as SessionEvent
      );
      const claims = events.filter((event) =>
        event.type === "user/message" || event.type === "context/injected"
      ).map((event) => [event.seq, event.payload]);
      assert.deepStrictEqual(claims, [
        [5, { content: "One", queued_seq: 2 }],
        [13, { content: "Two", queued_seq: 6 }],
      ]);
      assert.deepStrictEqual(events.at(-1)!.payload, { status: "completed" });
      // The third request answered "Two" after the retried first step: the model saw both, each once.
      const third = model.requests[2]!.body as { messages: { role: string; content: unknown }[] };
      assert.deepStrictEqual(
        third.messages.filter((message) => message.role === "user").map((m) => m.content),
        ["One", "Two"],
      );
    } finally {
      await watcher.close();
    }
  } finally {
    const { code } = await second.stop();
    assert.equal(code, 0);
  }
});
