/**
 * Whole turns over the socket, through the real `terret-ws` plugin mounted beside the real agents service and
 * default loop (SQLite store, tools, allow list, prompt) with the scripted model adapter: a plain turn, a
 * multi-step tool turn, a mid-turn steer, a denied tool, a cancellation, a cancel racing a tool result, a drop
 * mid-turn with a reconnect, and the resume of a turn a restart left open. Each client's event frames are compared
 * with the store (exactly) and with `tests/golden/ws/turn_*.jsonl` (normalised).
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import {
  type AgentStack,
  createAgentStack,
  type ScriptedAdapter,
  scriptedAdapter,
  scriptedTool,
  type ScriptItem,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { type Frame, RawClient, within, WsClient } from "./_clients.ts";
import { assertGolden } from "./_golden.ts";
import { eventFrame, TOKEN, TOKENS } from "./_harness.ts";

interface TurnHarness extends AsyncDisposable {
  readonly stack: AgentStack;
  readonly port: number;
  /** Connects, reads `hello`, subscribes from `fromSeq` (ref "s") and reads its ack. */
  subscribe(agentId: string, fromSeq?: number): Promise<WsClient>;
}

async function startTurns(
  adapter: ScriptedAdapter,
  options: { allow?: readonly string[]; sqlitePath?: string } = {},
): Promise<TurnHarness> {
  const dir = options.sqlitePath === undefined
    ? await Deno.makeTempDir({ prefix: "terret-ws-turns-" })
    : undefined;
  const stack = await createAgentStack({
    adapter,
    allow: options.allow ?? [],
    sqlitePath: options.sqlitePath ?? `${dir}/sessions.db`,
  });
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  const port = stack.ctx.get(WsServiceKey).port;
  const dispose = async (): Promise<void> => {
    await stack.dispose();
    if (dir !== undefined) await Deno.remove(dir, { recursive: true });
  };
  return {
    stack,
    port,
    async subscribe(agentId, fromSeq = 1) {
      const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`, {
        token: TOKEN,
      });
      assert.equal((await client.next()).type, "hello");
      client.send({ type: "subscribe", from_seq: fromSeq, ref: "s" });
      assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
      return client;
    },
    [Symbol.asyncDispose]: dispose,
  };
}

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

const events = (frames: readonly Frame[]): Frame[] => frames.filter((f) => f.type === "event");
const answers = (frames: readonly Frame[]): Frame[] => frames.filter((f) => f.type !== "event");

/** Asserts the client saw exactly the stored log, and that it matches the golden file. */
async function assertStream(
  h: TurnHarness,
  agentId: string,
  frames: readonly Frame[],
  golden: string,
): Promise<void> {
  assert.deepStrictEqual(events(frames), (await h.stack.sessions.read(agentId)).map(eventFrame));
  await assertGolden(golden, events(frames));
}

Deno.test("a plain turn over the socket: every durable event, in order, as stored", async () => {
  const adapter = scriptedAdapter([textReply(["Hel", "lo ", "there"])]);
  await using h = await startTurns(adapter);
  const client = await h.subscribe("plain");
  client.send({ type: "message", content: "Hi", ref: "m" });
  const frames = [...await client.take(1), ...await client.readUntil(isTurnEnd)];
  assert.deepStrictEqual(answers(frames), [{ type: "ack", ref: "m" }]);
  await assertStream(h, "plain", frames, "turn_plain");
  await client.close();
});

Deno.test("a multi-step tool turn over the socket", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "weather" } }], { text: "Checking." }),
    toolCallsReply([{ id: "c2", name: "lookup", args: { q: "forecast" } }]),
    textReply("Sunny."),
  ]);
  await using h = await startTurns(adapter, { allow: ["lookup"] });
  h.stack.tools.register(h.stack.ctx, scriptedTool("lookup").definition);
  const client = await h.subscribe("tools");
  client.send({ type: "message", content: "Weather?", ref: "m" });
  const frames = await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(answers(frames), [{ type: "ack", ref: "m" }]);
  await assertStream(h, "tools", frames, "turn_multi_step_tool");
  await client.close();
});

Deno.test("a steer sent mid-turn is logged as context/injected at the next step boundary", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "temperature" } }]),
    textReply("It is 21 degrees Celsius."),
  ]);
  await using h = await startTurns(adapter, { allow: ["lookup"] });
  const lookup = scriptedTool("lookup", { held: true });
  h.stack.tools.register(h.stack.ctx, lookup.definition);
  const client = await h.subscribe("steered");
  client.send({ type: "message", content: "How warm is it?", ref: "m" });
  await lookup.started(1);
  client.send({ type: "steer", content: "Use metric units.", ref: "st" });
  const acked = await client.readUntil((frame) => frame.ref === "st");
  lookup.release();
  const frames = [...acked, ...await client.readUntil(isTurnEnd)];
  assert.deepStrictEqual(answers(frames), [{ type: "ack", ref: "m" }, { type: "ack", ref: "st" }]);
  await assertStream(h, "steered", frames, "turn_steer_mid_turn");
  assert.deepStrictEqual(
    adapter.requests[1]!.messages.at(-1),
    { role: "user", parts: [{ type: "text", text: "Use metric units." }] },
  );
  await client.close();
});

Deno.test("a tool the allow list does not name is denied, and the turn goes on", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "secrets" } }]),
    textReply("I may not look that up."),
  ]);
  await using h = await startTurns(adapter, { allow: ["Read"] });
  const lookup = scriptedTool("lookup");
  h.stack.tools.register(h.stack.ctx, lookup.definition);
  const client = await h.subscribe("denied");
  client.send({ type: "message", content: "Look it up", ref: "m" });
  const frames = await client.readUntil(isTurnEnd);
  await assertStream(h, "denied", frames, "turn_denied_tool");
  assert.equal(lookup.calls.length, 0);
  await client.close();
});

Deno.test("a cancel frame stops the running turn: it ends cancelled", async () => {
  const held: ScriptItem[] = [
    { type: "message_start" },
    { type: "text_delta", text: "Thinking about" },
    { type: "gate", gate: "mid" },
    { type: "text_delta", text: " it" },
    { type: "message_stop", finishReason: "stop" },
  ];
  const adapter = scriptedAdapter([held]);
  await using h = await startTurns(adapter);
  const client = await h.subscribe("cancelled");
  client.send({ type: "message", content: "Think", ref: "m" });
  await adapter.reached("mid");
  client.send({ type: "cancel", reason: "operator stop", ref: "c" });
  const frames = await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(answers(frames), [{ type: "ack", ref: "m" }, { type: "ack", ref: "c" }]);
  await assertStream(h, "cancelled", frames, "turn_cancelled");
  await client.close();
});

Deno.test("a cancel racing a tool result: whichever lands first, one result per call and a cancelled turn", async () => {
  const script = (): ScriptItem[][] => [
    toolCallsReply([{ id: "c1", name: "slow", args: {} }]),
    [{ type: "message_start" }, { type: "gate", gate: "next" }, ...textReply("Done.").slice(1)],
  ];
  // The result wins: it is durable before the cancel arrives (during the next request).
  {
    const adapter = scriptedAdapter(script());
    await using h = await startTurns(adapter, { allow: ["slow"] });
    const slow = scriptedTool("slow", { held: true });
    h.stack.tools.register(h.stack.ctx, slow.definition);
    const client = await h.subscribe("race-result");
    client.send({ type: "message", content: "Go", ref: "m" });
    await slow.started(1);
    slow.release();
    await adapter.reached("next");
    client.send({ type: "cancel", reason: "too late", ref: "c" });
    const frames = await client.readUntil(isTurnEnd);
    await assertStream(h, "race-result", frames, "turn_cancel_after_result");
    await client.close();
  }
  // The cancel wins: the call is still running when it arrives.
  {
    const adapter = scriptedAdapter(script());
    await using h = await startTurns(adapter, { allow: ["slow"] });
    const slow = scriptedTool("slow", { held: true });
    h.stack.tools.register(h.stack.ctx, slow.definition);
    const client = await h.subscribe("race-cancel");
    client.send({ type: "message", content: "Go", ref: "m" });
    await slow.started(1);
    client.send({ type: "cancel", reason: "too late", ref: "c" });
    await client.readUntil((frame) => frame.ref === "c");
    slow.release();
    await client.readUntil(isTurnEnd);
    await assertStream(h, "race-cancel", client.frames, "turn_cancel_before_result");
    await client.close();
  }
  // Truly at once: the release and the cancel in the same tick. Either outcome is one of the two above.
  {
    const adapter = scriptedAdapter(script());
    await using h = await startTurns(adapter, { allow: ["slow"] });
    const slow = scriptedTool("slow", { held: true });
    h.stack.tools.register(h.stack.ctx, slow.definition);
    const client = await h.subscribe("race");
    client.send({ type: "message", content: "Go", ref: "m" });
    await slow.started(1);
    client.send({ type: "cancel", reason: "too late", ref: "c" });
    slow.release();
    const frames = await client.readUntil(isTurnEnd);
    const stored = await h.stack.sessions.read("race");
    assert.deepStrictEqual(events(frames), stored.map(eventFrame));
    const results = stored.filter((event) => event.type === "tool/result");
    assert.deepStrictEqual(results.map((event) => (event.payload as { id: string }).id), ["c1"]);
    assert.ok(
      [
        { id: "c1", name: "slow", content: "slow ok: {}", is_error: false },
        {
          id: "c1",
          name: "slow",
          content:
            'The call to "slow" was cancelled before it finished (too late); it may have had partial effects.',
          is_error: true,
        },
      ].some((payload) => JSON.stringify(payload) === JSON.stringify(results[0]!.payload)),
      `unexpected result ${JSON.stringify(results[0]!.payload)}`,
    );
    assert.deepStrictEqual(stored.at(-1)!.payload, {
      status: "cancelled",
      error: { code: "Cancelled", message: "too late" },
    });
    await client.close();
  }
});

Deno.test("a connection dropped mid-turn: the turn completes, and the reconnect sees no gap and no duplicate", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "slow", args: { n: 1 } }]),
    textReply(["All ", "done."]),
  ]);
  await using h = await startTurns(adapter, { allow: ["slow"] });
  const slow = scriptedTool("slow", { held: true });
  h.stack.tools.register(h.stack.ctx, slow.definition);
  // The first client is raw TCP, so it can vanish without a close frame.
  const { client: first } = await RawClient.upgrade(h.port, "/v1/agents/dropped/stream", {
    Authorization: `Bearer ${TOKEN}`,
  });
  const decoder = new TextDecoder();
  const read = async (): Promise<Frame> => {
    for (;;) {
      const frame = await within(first.readFrame(), 10_000, "a frame");
      if (frame!.opcode === 0x1) return JSON.parse(decoder.decode(frame!.payload));
    }
  };
  assert.equal((await read()).type, "hello");
  await first.sendText(JSON.stringify({ type: "subscribe", from_seq: 1, ref: "s" }));
  await first.sendText(JSON.stringify({ type: "message", content: "Work", ref: "m" }));
  const before: Frame[] = [];
  while (
    !before.some((frame) => (frame.event as SessionEvent | undefined)?.type === "tool/call") ||
    !before.some((frame) => frame.ref === "m")
  ) before.push(await read());
  first.close();
  // The agent keeps working without anyone connected.
  slow.release();
  const agent = h.stack.agents.get("dropped")!;
  await agent.idle();
  const last = Math.max(...events(before).map((frame) => (frame.event as SessionEvent).seq));
  const second = await h.subscribe("dropped", last + 1);
  const after = await second.readUntil(isTurnEnd);
  const all = [...events(before), ...events(after)];
  await assertStream(h, "dropped", all, "turn_dropped_and_reconnected");
  assert.equal(slow.calls[0]!.run.signal.aborted, false);
  await second.close();
});

Deno.test("after a restart, a message to an agent whose turn was left open resumes that turn", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-ws-resume-" });
  try {
    const sqlitePath = `${dir}/sessions.db`;
    {
      const adapter = scriptedAdapter([toolCallsReply([{ id: "c1", name: "fetch", args: {} }])]);
      await using h = await startTurns(adapter, { allow: ["fetch"], sqlitePath });
      const fetchTool = scriptedTool("fetch", { held: true });
      h.stack.tools.register(h.stack.ctx, fetchTool.definition);
      const client = await h.subscribe("resumed");
      client.send({ type: "message", content: "Fetch it", ref: "m" });
      await fetchTool.started(1);
      await client.readUntil((frame) =>
        (frame.event as SessionEvent | undefined)?.type === "tool/call"
      );
      await client.close();
      // Shutting down mid-tool leaves the turn open in the log, as a crash would.
    }
    const adapter = scriptedAdapter([textReply("Fetched it; you are welcome.")]);
    await using h = await startTurns(adapter, { allow: ["fetch"], sqlitePath });
    h.stack.tools.register(h.stack.ctx, scriptedTool("fetch").definition);
    const client = await h.subscribe("resumed");
    client.send({ type: "message", content: "Thanks", ref: "m2" });
    // The open turn is re-entered (no second turn/start): the owed call runs again, and the waking message is
    // claimed by the turn's next step.
    const frames = await client.readUntil(isTurnEnd);
    await h.stack.agents.get("resumed")!.idle();
    await assertStream(h, "resumed", frames, "turn_resumed_after_restart");
    await client.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a secret in a message frame is scrubbed at the append boundary and never sent back", async () => {
  const secret = "sk-live-7c1d2e3f4a5b6c7d8e9f";
  const adapter = scriptedAdapter([textReply(`I will not repeat ${secret}.`)]);
  await using h = await startTurns(adapter);
  h.stack.sessions.registerScrubber(
    h.stack.ctx,
    (text) => text.replaceAll(secret, "[REDACTED]"),
  );
  const client = await h.subscribe("secretive");
  client.send({ type: "message", content: `my key is ${secret}`, ref: "m" });
  const frames = await client.readUntil(isTurnEnd);
  const wire = JSON.stringify(client.frames);
  assert.equal(wire.includes(secret), false);
  assert.equal(wire.split("[REDACTED]").length - 1, 4); // input/queued, user/message, the chunk, assistant/message
  await assertStream(h, "secretive", frames, "turn_scrubbed_secret");
  await client.close();
});

Deno.test("set_policy over the socket narrows the floor for this agent's next calls", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: {} }]),
    textReply("Not allowed, then."),
  ]);
  await using h = await startTurns(adapter, { allow: ["lookup", "other"] });
  const lookup = scriptedTool("lookup");
  h.stack.tools.register(h.stack.ctx, lookup.definition);
  const client = await h.subscribe("narrowed");
  client.send({ type: "set_policy", allow: ["other", "lookup_*"], ref: "p" });
  const first = await client.take(3);
  assert.deepStrictEqual(answers(first), [{ type: "ack", ref: "p" }]);
  assert.deepStrictEqual(
    events(first),
    (await h.stack.sessions.read("narrowed")).slice(0, 2).map(eventFrame),
  );
  client.send({ type: "message", content: "Look it up", ref: "m" });
  await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(
    events(client.frames),
    (await h.stack.sessions.read("narrowed")).map(eventFrame),
  );
  await assertGolden("turn_narrowed_policy", events(client.frames));
  assert.equal(lookup.calls.length, 0);
  await client.close();
});
