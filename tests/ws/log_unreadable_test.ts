/**
 * A row missing from the store, through a real `trt serve`: a turn is logged, the process stops, one row is deleted
 * from `session_events` in the SQLite file, and a second process serves the same home. A subscriber from seq 1 gets
 * the events before the hole, then an `error` frame naming the session and the seq, then close 4010, and the log
 * names the store and the row; a subscriber past the hole is served, live tail included.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { SessionEvent } from "@terret/core";
import { WsClient } from "./_clients.ts";
import { replayedServePatch, serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

Deno.test("a row deleted from session_events: trt serve sends log_unreadable naming the seq, closes 4010 and logs the row; a reader past it is served", async () => {
  await using tree = await writeTree({
    "serve.yml": replayedServePatch("{ port: 0, token_file: ws/token, dir: !setting terret.home }"),
  });
  const url = (port: number): string => `ws://127.0.0.1:${port}/v1/agents/demo/stream`;
  const first = await serve(tree.dir, [tree.path("serve.yml")]);
  const token = (await Deno.readTextFile(tree.path("ws/token"))).trim();
  const writer = await WsClient.open(url(first.port), { token });
  await writer.next();
  writer.send({ type: "subscribe", from_seq: 1 });
  writer.send({ type: "message", content: "Say hello in five words." });
  const turn = (await writer.readUntil(isTurnEnd)).filter((frame) => frame.type === "event");
  assert.equal(turn.length, 9);
  const closing = writer.closed;
  assert.equal((await first.stop()).code, 0);
  await closing;

  const database = tree.path("sessions/terret.db");
  const db = new DatabaseSync(database);
  assert.equal(
    db.prepare("DELETE FROM session_events WHERE session_id = 'demo' AND seq = 3").run().changes,
    1,
  );
  db.close();

  const second = await serve(tree.dir, [tree.path("serve.yml")]);
  let stopped = false;
  try {
    const reader = await WsClient.open(url(second.port), { token });
    assert.deepStrictEqual(await reader.next(), {
      type: "hello",
      protocol: 1,
      agent_id: "demo",
      session_id: "demo",
      head_seq: 9,
    });
    reader.send({ type: "subscribe", from_seq: 1, ref: "s" });
    assert.deepStrictEqual(await reader.closed, { code: 4010, reason: "log unreadable" });
    assert.deepStrictEqual(reader.frames.slice(1), [
      { type: "ack", ref: "s" },
      turn[0],
      turn[1],
      {
        type: "error",
        ref: null,
        code: "log_unreadable",
        message:
          `Cannot send seq 3 of session "demo": the session log cannot be read there (the server's log names the row)`,
        session_id: "demo",
        seq: 3,
      },
    ]);

    // The session is not stalled for everyone: a reader past the hole gets the rest, then the next turn live.
    const past = await WsClient.open(url(second.port), { token });
    await past.next();
    past.send({ type: "subscribe", from_seq: 4 });
    assert.deepStrictEqual(await past.take(6), turn.slice(3));
    past.send({ type: "message", content: "Again, please." });
    const next = await past.readUntil(isTurnEnd);
    assert.deepStrictEqual(
      next.map((frame) => (frame.event as SessionEvent).seq),
      [10, 11, 12, 13, 14, 15, 16, 17],
    );
    await past.close();
    const { code, lines, stderr } = await second.stop();
    stopped = true;
    assert.equal(code, 0);
    const logged = [...lines, ...stderr.split("\n")].flatMap((line) => {
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        return record.code === "StoreCorrupt" ? [record] : [];
      } catch {
        return [];
      }
    });
    // The store logs the row once per read that finds it: the one subscriber from seq 1 read it once.
    assert.deepStrictEqual(logged.map(({ at: _, ...record }) => record), [{
      level: "error",
      message:
        `Cannot read seq 3 of session "demo" from the sqlite store "${database}": the row is missing (the next stored seq is 4)`,
      code: "StoreCorrupt",
      store: database,
      session_id: "demo",
      seq: 3,
    }]);
  } finally {
    if (!stopped) await second.stop();
  }
});
