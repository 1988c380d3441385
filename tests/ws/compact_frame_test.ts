/**
 * The `compact {instructions?}` frame: acked once `session/compacted` is durable (the event reaches the subscribed
 * client), refused with `invalid_field` for bad instructions and `not_supported` without a compaction row.
 */
import assert from "node:assert/strict";
import { CompactionService, type SessionEvent } from "@terret/core";
import { SUMMARY_INSTRUCTIONS } from "@terret/core/compaction";
import {
  createAgentStack,
  type ResponseScript,
  scriptedAdapter,
  textReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { type Frame, WsClient } from "./_clients.ts";
import { TOKEN, TOKENS } from "./_harness.ts";

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

async function serve(compaction: boolean) {
  let replies = 0;
  const adapter = scriptedAdapter(
    Array.from(
      { length: 6 },
      (): ResponseScript => (request) =>
        request.system === SUMMARY_INSTRUCTIONS
          ? textReply("They greeted twice.", { usage: { input_tokens: 50, output_tokens: 5 } })
          : textReply(`Hello ${++replies}.`),
    ),
  );
  const stack = await createAgentStack({ adapter });
  if (compaction) {
    stack.ctx.plugin(CompactionService, { auto: false, keep: 0.01 }, { id: "compaction" });
  }
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  const port = stack.ctx.get(WsServiceKey).port;
  const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/c1/stream`, {
    token: TOKEN,
  });
  assert.equal((await client.next()).type, "hello");
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
  // The session is created by the first frame that needs it (docs/protocol.md): nothing to read yet.
  return { adapter, stack, client, [Symbol.asyncDispose]: () => stack.dispose() };
}

Deno.test("compact over the socket appends session/compacted and acks once it is durable", async () => {
  await using h = await serve(true);
  for (const text of ["Hi", "Hi again"]) {
    h.client.send({ type: "message", content: text });
    await h.client.readUntil(isTurnEnd);
  }
  h.client.send({ type: "compact", instructions: "Be brief.", ref: "c" });
  // The ack and the event are separate flows (docs/protocol.md §5): either may come first.
  const answered = await h.client.take(2);
  const [event] = answered.filter((frame) => frame.type === "event");
  assert.deepStrictEqual(answered.filter((frame) => frame.type !== "event"), [
    { type: "ack", ref: "c" },
  ]);
  const compacted = (event as { event: SessionEvent }).event;
  assert.deepStrictEqual([compacted.type, compacted.payload], [
    "session/compacted",
    {
      summary: "They greeted twice.",
      through_seq: 11,
      kept_from_seq: 12, // the second turn's step/start: its input/queued (10) and turn/start (11) project nothing
      summarized_messages: 2,
      usage: { input_tokens: 50, output_tokens: 5 },
    },
  ]);
  assert.deepStrictEqual(
    (await h.stack.sessions.deriveMessages("c1")).map((m) => (m.parts[0] as { text: string }).text),
    ["They greeted twice.", "Hi again", "Hello 2."],
  );
  h.client.send({ type: "compact", instructions: 5, ref: "bad" });
  assert.deepStrictEqual(await h.client.next(), {
    type: "error",
    ref: "bad",
    code: "invalid_field",
    message:
      'Cannot read the "compact" frame: "instructions" must be a string of at most 4096 characters',
  });
  await h.client.close();
});

Deno.test("compact without a compaction row is refused with not_supported", async () => {
  await using h = await serve(false);
  h.client.send({ type: "compact", ref: "c" });
  assert.deepStrictEqual(await h.client.next(), {
    type: "error",
    ref: "c",
    code: "not_supported",
    message: "Cannot compact the session: no compaction row is mounted on this server",
  });
  await h.client.close();
});
