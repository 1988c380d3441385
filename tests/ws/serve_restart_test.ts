/**
 * `trt serve` as a real process serving the socket: a turn over it (the model answered by the shipped plain-text
 * cassette through the replay middleware), SIGTERM, a second process on the same Terret home: the session replays
 * byte for byte and the next message starts a new turn. Also: the token `serve` generates is printed once, stored
 * with mode 0600, and works; and the second process runs under `--scoped`.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { WsClient } from "./_clients.ts";
import { replayedServePatch, serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

Deno.test("restarting trt serve on the same store: the session replays byte for byte, and the next message starts a new turn", async () => {
  await using tree = await writeTree({
    "serve.yml": replayedServePatch("{ port: 0, token_file: ws/token, dir: !setting terret.home }"),
  });
  const first = await serve(tree.dir, [tree.path("serve.yml")]);
  const token = (await Deno.readTextFile(tree.path("ws/token"))).trim();
  assert.equal((await Deno.stat(tree.path("ws/token"))).mode! & 0o777, 0o600);
  assert.deepStrictEqual(first.lines.slice(2, 4), [
    `trt serve: the WebSocket event stream is at ws://127.0.0.1:${first.port}/v1/agents/<agent_id>/stream (row interfaces.ws, docs/protocol.md)`,
    `trt serve: generated a socket token and stored it in ${
      tree.path("ws/token")
    } (mode 0600); it is not printed again: ${token}`,
  ]);
  const url = (port: number) => `ws://127.0.0.1:${port}/v1/agents/demo/stream`;
  const before = await WsClient.open(url(first.port), { token });
  assert.equal((await before.next()).type, "hello");
  before.send({ type: "subscribe", from_seq: 1, ref: "s" });
  before.send({ type: "message", content: "Say hello in five words.", ref: "m" });
  const turn = await before.readUntil(isTurnEnd);
  assert.deepStrictEqual(
    turn.filter((frame) => frame.type !== "event"),
    [{ type: "ack", ref: "s" }, { type: "ack", ref: "m" }],
  );
  const closing = before.closed;
  const stopped = await first.stop();
  // The shutdown closed the connection as documented, and the process ended cleanly.
  assert.deepStrictEqual(await closing, { code: 1001, reason: "server shutting down" });
  assert.equal(stopped.code, 0);
  assert.equal(stopped.lines.at(-2), "trt serve: stopped");
  const firstRun = before.texts.filter((text) => text.startsWith('{"type":"event"'));
  assert.deepStrictEqual(
    before.frames.filter((frame) => frame.type === "event").map((frame) =>
      (frame.event as SessionEvent).type
    ),
    [
      "session/created",
      "input/queued",
      "turn/start",
      "step/start",
      "user/message",
      "assistant/chunk",
      "assistant/message",
      "step/end",
      "turn/end",
    ],
  );

  // The second process runs least-privilege (`--scoped`): the socket, its token file and the store work under
  // exactly the permissions their rows declare.
  const second = await serve(tree.dir, [tree.path("serve.yml")], { scoped: true });
  try {
    assert.deepStrictEqual(second.lines.slice(2, 4), [
      `trt serve: the WebSocket event stream is at ws://127.0.0.1:${second.port}/v1/agents/<agent_id>/stream (row interfaces.ws, docs/protocol.md)`,
      `trt serve: clients authenticate with the token stored in ${tree.path("ws/token")}`,
    ]);
    const after = await WsClient.open(url(second.port), { token });
    assert.deepStrictEqual(await after.next(), {
      type: "hello",
      protocol: 1,
      agent_id: "demo",
      session_id: "demo",
      head_seq: firstRun.length,
    });
    after.send({ type: "subscribe", from_seq: 1 });
    await after.take(firstRun.length);
    // Byte for byte: the same text frames, from the store this time.
    assert.deepStrictEqual(after.texts.slice(1), firstRun);
    after.send({ type: "message", content: "Again, please." });
    const next = await after.readUntil(isTurnEnd);
    const events = next.map((frame) => frame.event as SessionEvent);
    assert.deepStrictEqual(
      events.map((event) => [event.seq, event.type]),
      [
        [10, "input/queued"],
        [11, "turn/start"],
        [12, "step/start"],
        [13, "user/message"],
        [14, "assistant/chunk"],
        [15, "assistant/message"],
        [16, "step/end"],
        [17, "turn/end"],
      ],
    );
    assert.deepStrictEqual(events.at(-1)!.payload, { status: "completed" });
    await after.close();
  } finally {
    const { code, stderr } = await second.stop();
    assert.equal(code, 0);
    // Scoped: the socket's listen grant is the row's host (port 0 may be any port), nothing wider.
    assert.match(
      stderr.split("\n")[0]!,
      /^trt serve: re-running under scoped permissions: .* --allow-net=127\.0\.0\.1,openrouter\.ai .*--no-prompt$/,
    );
  }
});
