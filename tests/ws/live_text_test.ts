/**
 * Live text under redaction: with the `redaction` row mounted, a slow streamed reply reaches a socket client as a
 * series of `assistant/chunk` frames while the model is still streaming (the streaming scrubber holds back only the
 * tail that could still start a secret), and no registered secret appears in any frame whatever the split.
 */
import assert from "node:assert/strict";
import { RedactionKey, redactionPlugin, type SessionEvent } from "@terret/core";
import { DEFAULT_REDACTION_TOKEN } from "@terret/core/redaction";
import {
  createAgentStack,
  scriptedAdapter,
  type ScriptItem,
  textReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { type Frame, WsClient } from "./_clients.ts";
import { TOKEN, TOKENS } from "./_harness.ts";

const SECRET = "opal-7Qz-river-88-lantern"; // a registered literal (as the credentials row registers keys)
const T = DEFAULT_REDACTION_TOKEN;

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";
const chunkTexts = (frames: readonly Frame[]): string[] =>
  frames.filter((frame) =>
    frame.type === "event" && (frame.event as SessionEvent).type === "assistant/chunk"
  ).map((frame) => ((frame.event as SessionEvent).payload as { text: string }).text);

async function serve(adapter: ReturnType<typeof scriptedAdapter>) {
  const stack = await createAgentStack({ adapter });
  stack.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  stack.ctx.get(RedactionKey).addSecret(stack.ctx, SECRET);
  const port = stack.ctx.get(WsServiceKey).port;
  const open = async (agentId: string): Promise<WsClient> => {
    const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`, {
      token: TOKEN,
    });
    assert.equal((await client.next()).type, "hello");
    client.send({ type: "subscribe", from_seq: 1, ref: "s" });
    assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
    return client;
  };
  return { stack, open, [Symbol.asyncDispose]: () => stack.dispose() };
}

Deno.test("a slow 40-delta reply reaches the client as chunks while it streams, with the redaction row mounted", async () => {
  // 40 deltas of 8 characters; a registered secret spans deltas 20 to 23. Each delta waits at a gate the test
  // opens only once the text before it has reached the client as a chunk (or the held tail still covers it).
  const deltas = Array.from({ length: 40 }, (_, i) => `w${String(i).padStart(2, "0")}-abc `);
  const text = deltas.slice(0, 20).join("") + `${SECRET} ` + deltas.slice(20).join("");
  const pieces = Array.from(
    { length: 40 },
    (_, i) => text.slice(i * text.length / 40, (i + 1) * text.length / 40),
  );
  const items: ScriptItem[] = [{ type: "message_start" }];
  pieces.forEach((piece, i) => {
    items.push({ type: "gate", gate: `d${i}` }, { type: "text_delta", text: piece });
  });
  items.push(...textReply([]).slice(1));
  const adapter = scriptedAdapter([items]);
  await using h = await serve(adapter);
  const client = await h.open("live");
  client.send({ type: "message", content: "Tell me a long story", ref: "m" });
  const live: string[] = [];
  for (let i = 0; i < pieces.length; i++) {
    await adapter.reached(`d${i}`);
    adapter.open(`d${i}`);
    const sent = pieces.slice(0, i + 1).join("").length;
    const held = 64 + SECRET.length; // the window, plus a secret that may be forming past it
    // Wait until everything but the held tail has reached the client (a condition, with the client's deadline).
    while (live.join("").replaceAll(T, SECRET).length < sent - held) {
      const frame = await client.next();
      live.push(...chunkTexts([frame]));
    }
  }
  const rest = await client.readUntil(isTurnEnd);
  const all = [...live, ...chunkTexts(rest)];
  assert.ok(live.length >= 10, `only ${live.length} chunks arrived while the reply streamed`);
  assert.equal(all.join(""), text.replace(SECRET, T));
  assert.equal(JSON.stringify(client.frames).includes(SECRET), false);
  const stored = (await h.stack.sessions.read("live")).filter((event) =>
    event.type === "assistant/chunk"
  ).map((event) => (event.payload as { text: string }).text);
  assert.deepStrictEqual(stored, all);
  await client.close();
});

Deno.test("a registered secret split across two deltas at every offset never reaches a frame", async () => {
  const before = "x".repeat(90);
  const text = `${before} ${SECRET} after`;
  const start = text.indexOf(SECRET);
  const replies = [];
  for (let cut = start + 1; cut < start + SECRET.length; cut++) {
    replies.push(textReply([text.slice(0, cut), text.slice(cut)]));
  }
  await using h = await serve(scriptedAdapter(replies));
  const client = await h.open("split");
  for (let i = 0; i < replies.length; i++) {
    client.send({ type: "message", content: `turn ${i}`, ref: i });
    await client.readUntil(isTurnEnd);
  }
  assert.equal(JSON.stringify(client.frames).includes(SECRET), false);
  // Each reply's chunks concatenate to the redacted text.
  const events = await h.stack.sessions.read("split");
  let turn: string[] = [];
  const replies_: string[] = [];
  for (const event of events) {
    if (event.type === "assistant/chunk") turn.push((event.payload as { text: string }).text);
    if (event.type === "turn/end") {
      replies_.push(turn.join(""));
      turn = [];
    }
  }
  assert.deepStrictEqual(replies_, replies.map(() => text.replace(SECRET, T)));
  await client.close();
});
