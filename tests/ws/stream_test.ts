/**
 * The event stream (docs/protocol.md §3, §6): replay then live tail exactly as stored, reconnects with no gap and
 * no duplicate, replay caps, supersede, backpressure (`lagged` for a slow reader while another agent proceeds,
 * a blocked replay taking no turn and dropped after send_timeout_seconds), heartbeat, shutdown, and no secret on
 * the socket.
 */
import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import type { AppendInput } from "@terret/core/sessions";
import type { SessionEvent } from "@terret/core";
import { until } from "../../exec/process/_testing.ts";
import { type Frame, RawClient, within, WsClient } from "./_clients.ts";
import { assertGolden } from "./_golden.ts";
import { chunk, eventFrame, type Harness, startHarness, TOKEN } from "./_harness.ts";

const AUTH = { Authorization: `Bearer ${TOKEN}` };
const decoder = new TextDecoder();

/** A scripted plain turn, as the loop writes it. */
const PLAIN_TURN: AppendInput[] = [
  { type: "turn/start", payload: {} },
  { type: "user/message", payload: { content: "Say hello" } },
  { type: "step/start", payload: {} },
  chunk("Hel"),
  chunk("lo!"),
  { type: "assistant/message", payload: { parts: [{ type: "text", text: "Hello!" }] } },
  {
    type: "step/end",
    payload: { usage: { input_tokens: 12, output_tokens: 3 }, finish_reason: "stop" },
  },
  { type: "turn/end", payload: { status: "completed" } },
];

function seqs(frames: readonly Frame[]): number[] {
  return frames.filter((frame) => frame.type === "event").map((frame) =>
    (frame.event as SessionEvent).seq
  );
}

/** Opens a raw connection to `agentId`, reads the hello, and subscribes from `fromSeq`. */
async function rawSubscriber(h: Harness, agentId: string, fromSeq: number): Promise<RawClient> {
  const { client, head } = await RawClient.upgrade(h.port, `/v1/agents/${agentId}/stream`, AUTH);
  assert.equal(head.status, 101);
  const hello = await client.readFrame();
  assert.equal(JSON.parse(decoder.decode(hello!.payload)).type, "hello");
  await client.sendText(JSON.stringify({ type: "subscribe", from_seq: fromSeq, ref: "s" }));
  return client;
}

Deno.test("subscribe replays the log from the store, then tails it live, every event exactly as stored", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  await h.append("a1", ...PLAIN_TURN.slice(0, 4));
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  const replayed = await client.take(6);
  await h.append("a1", ...PLAIN_TURN.slice(4));
  const live = await client.take(4);
  const frames = [...replayed, ...live];
  assert.deepStrictEqual(frames, [
    { type: "ack", ref: "s" },
    ...(await h.sessions.read("a1")).map(eventFrame),
  ]);
  await assertGolden("replay_then_tail", frames);
  await client.close();
});

Deno.test("a connection dropped mid-turn cancels nothing; the reconnect from last seq + 1 sees no gap and no duplicate", async () => {
  await using h = await startHarness();
  const first = await rawSubscriber(h, "a1", 1);
  await first.sendText(JSON.stringify({ type: "message", content: "work for a while", ref: "m" }));
  // The agent keeps writing throughout: 150 chunks, then (once the connection is gone) 150 more and the end of
  // its turn.
  const dropped = Promise.withResolvers<void>();
  let writing = true;
  const writer = (async () => {
    await h.append("a1", { type: "turn/start", payload: {} }, {
      type: "user/message",
      payload: { content: "work for a while" },
    });
    for (let i = 0; i < 150; i++) await h.append("a1", chunk(`part ${i} `));
    await dropped.promise;
    for (let i = 150; i < 300; i++) await h.append("a1", chunk(`part ${i} `));
    await h.append("a1", { type: "turn/end", payload: { status: "completed" } });
    writing = false;
  })();
  // Read until seq 100 and the message's ack have arrived, then drop the TCP connection without a close frame.
  const before: Frame[] = [];
  while (!seqs(before).includes(100) || !before.some((frame) => frame.ref === "m")) {
    const frame = await within(first.readFrame(), 10_000, "a frame before the drop");
    if (frame!.opcode === 0x1) before.push(JSON.parse(decoder.decode(frame!.payload)));
  }
  first.close();
  dropped.resolve();
  const lastSeq = Math.max(...seqs(before));
  const second = await WsClient.open(h.url("a1"), { token: TOKEN });
  await second.next(); // hello
  second.send({ type: "subscribe", from_seq: lastSeq + 1, ref: "again" });
  const after = await second.readUntil((frame) =>
    frame.type === "event" && (frame.event as SessionEvent).type === "turn/end"
  );
  await writer;
  assert.equal(writing, false);
  const stored = await h.sessions.read("a1");
  assert.deepStrictEqual(stored.length, 304);
  // Everything the two connections saw, in order: each event exactly once.
  assert.deepStrictEqual(
    [...before, ...after].filter((frame) => frame.type === "event"),
    stored.map(eventFrame),
  );
  assert.deepStrictEqual(before.filter((frame) => frame.type !== "event"), [
    { type: "ack", ref: "s" },
    { type: "ack", ref: "m" },
  ]);
  assert.deepStrictEqual(after[0], { type: "ack", ref: "again" });
  await second.close();
  // Only the message reached the agent: no connection ever cancelled anything.
  assert.deepStrictEqual(h.agents.calls.map((call) => call.verb), ["open", "message", "open"]);
});

Deno.test("a replay past replay_limit is truncated, and says so first", async () => {
  await using h = await startHarness({ replay_limit: 10 });
  await h.create("a1");
  await h.append("a1", ...Array.from({ length: 24 }, (_, i) => chunk(`c${i}`))); // head 25
  const stored = await h.sessions.read("a1");
  for (
    const [from, truncated] of [[1, 16], [15, 16], [16, undefined], [20, undefined]] as const
  ) {
    const { client } = await h.connect("a1");
    client.send({ type: "subscribe", from_seq: from, ref: from });
    const expected = [
      { type: "ack", ref: from },
      ...(truncated === undefined
        ? []
        : [{ type: "replay_truncated", requested_from_seq: from, from_seq: truncated }]),
      ...stored.slice((truncated ?? from) - 1).map(eventFrame),
    ];
    assert.deepStrictEqual(await client.take(expected.length), expected);
    await client.close();
  }
});

Deno.test("a newer connection for the same agent supersedes the older one with 4009", async () => {
  await using h = await startHarness();
  const { client: older } = await h.connect("a1");
  older.send({ type: "subscribe", from_seq: 1, ref: "s" });
  await older.take(2);
  const { client: newer, hello } = await h.connect("a1");
  assert.deepStrictEqual(await within(older.closed, 10_000, "the older close"), {
    code: 4009,
    reason: "superseded",
  });
  assert.deepStrictEqual(hello.head_seq, 1);
  newer.send({ type: "subscribe", from_seq: 2, ref: "s2" });
  assert.deepStrictEqual(await newer.next(), { type: "ack", ref: "s2" });
  const [event] = await h.append("a1", { type: "turn/start", payload: {} });
  assert.deepStrictEqual(await newer.next(), eventFrame(event!));
  assert.deepStrictEqual(older.drain(), []);
  await newer.close();
  assert.equal(h.server.stats().superseded, 1);
  assert.deepStrictEqual(h.agents.calls.map((call) => call.verb), ["open", "open"]);
});

Deno.test("a slow reader is sent lagged and closed with 4008 while another agent's stream proceeds", async () => {
  await using h = await startHarness({ queue_limit: 64 * 1024 });
  const slow = await rawSubscriber(h, "slow", 1); // never reads until it has been dropped
  const { client: fast } = await h.connect("fast");
  fast.send({ type: "subscribe", from_seq: 1, ref: "f" });
  // The slow agent streams big chunks until the socket gives up on its reader (the kernel's buffers absorb a
  // few MiB before the server's queue starts to fill); the fast agent streams small ones alongside.
  const big = "x".repeat(64 * 1024);
  const slowWriter = (async () => {
    while (h.server.stats().lagged === 0) await h.append("slow", chunk(big));
  })();
  for (let i = 0; i < 200; i++) await h.append("fast", chunk(`f${i}`));
  await within(slowWriter, 30_000, "the slow reader to be dropped");
  const fastFrames = await fast.take(202);
  assert.deepStrictEqual(fastFrames, [
    { type: "ack", ref: "f" },
    ...(await h.sessions.read("fast")).map(eventFrame),
  ]);
  // Now the slow reader reads what it was sent: contiguous events from 1, then lagged naming the last, then 4008.
  const { frames, close } = await within(
    slow.readUntilClose(),
    30_000,
    "the slow reader's backlog",
  );
  slow.close();
  assert.deepStrictEqual(close, { code: 4008, reason: "lagged" });
  const events = frames.filter((frame) => frame.type === "event");
  const last = events.length;
  assert.deepStrictEqual(frames, [
    { type: "ack", ref: "s" },
    ...(await h.sessions.read("slow", { to_seq: last })).map(eventFrame),
    { type: "lagged", last_seq: last },
  ]);
  assert.ok(last < await h.sessions.head("slow"), "the reader was dropped before the head");
  await fast.close();
  // It reconnects from its own last seq + 1 and is served the rest.
  const { client: again } = await h.connect("slow");
  again.send({ type: "subscribe", from_seq: last + 1, ref: "r" });
  const rest = await again.take(1 + (await h.sessions.head("slow")) - last);
  assert.deepStrictEqual(rest, [
    { type: "ack", ref: "r" },
    ...(await h.sessions.read("slow", { from_seq: last + 1 })).map(eventFrame),
  ]);
  await again.close();
});

Deno.test("a replay blocked on a reader that stopped reading takes no turn: another replay runs at once, and the stuck one is dropped after send_timeout_seconds", async () => {
  await using h = await startHarness({
    queue_limit: 64 * 1024,
    max_concurrent_replays: 1,
    send_timeout_seconds: 0.3,
  });
  const big = "y".repeat(64 * 1024);
  await h.create("stuck");
  await h.create("next");
  await h.append("stuck", ...Array.from({ length: 100 }, () => chunk(big))); // 6.4 MiB to replay
  await h.append("next", chunk("hello"));
  const stuck = await rawSubscriber(h, "stuck", 1); // never reads
  await until(
    "the stuck replay to block on its socket",
    () => h.server.stats().replays_blocked === 1,
    10_000,
  );
  const { client } = await h.connect("next");
  client.send({ type: "subscribe", from_seq: 1, ref: "n" });
  // Acked at once; its replay takes the only turn at once, since the blocked one holds none.
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "n" });
  const stored = await h.sessions.read("next");
  assert.deepStrictEqual(await client.take(2), stored.map(eventFrame));
  assert.deepStrictEqual(
    [h.server.stats().lagged, h.server.stats().replays_blocked],
    [0, 1],
  );
  await until("the stuck reader to be dropped", () => h.server.stats().lagged === 1, 10_000);
  const { frames, close } = await within(stuck.readUntilClose(), 30_000, "the stuck backlog");
  stuck.close();
  assert.deepStrictEqual(close, { code: 4008, reason: "lagged" });
  const last = seqs(frames).length;
  assert.deepStrictEqual(frames.at(-1), { type: "lagged", last_seq: last });
  assert.deepStrictEqual(seqs(frames), Array.from({ length: last }, (_, i) => i + 1));
  await client.close();
});

Deno.test("replays beyond max_concurrent_replays wait their turn and all complete exactly", async () => {
  await using h = await startHarness({ max_concurrent_replays: 2 });
  const agents = ["r1", "r2", "r3", "r4", "r5"];
  for (const agent of agents) {
    await h.create(agent);
    await h.append(agent, ...Array.from({ length: 2000 }, (_, i) => chunk(`${agent}-${i}`)));
  }
  const clients = await Promise.all(agents.map((agent) => h.connect(agent)));
  for (const { client } of clients) client.send({ type: "subscribe", from_seq: 1, ref: 1 });
  for (const [i, { client }] of clients.entries()) {
    const frames = await client.take(2002);
    assert.deepStrictEqual(frames, [
      { type: "ack", ref: 1 },
      ...(await h.sessions.read(agents[i]!)).map(eventFrame),
    ]);
  }
  const stats = h.server.stats();
  assert.deepStrictEqual(
    [stats.replays_peak, stats.replays_running, stats.replays_waiting],
    [2, 0, 0],
  );
  await Promise.all(clients.map(({ client }) => client.close()));
});

Deno.test("a client that does not answer pings is closed after heartbeat_seconds", async () => {
  await using h = await startHarness({ heartbeat_seconds: 1 });
  const { client } = await RawClient.upgrade(h.port, "/v1/agents/a1/stream", AUTH);
  const opcodes: number[] = [];
  for (;;) {
    const frame = await within(client.readFrame(), 10_000, "the heartbeat close");
    if (frame === undefined) break;
    opcodes.push(frame.opcode);
    if (frame.opcode === 0x8) break;
  }
  client.close();
  // hello, then Deno's ping, then the end of the connection.
  assert.deepStrictEqual(opcodes.slice(0, 2), [0x1, 0x9]);
  await until("the server to forget it", () => h.server.stats().connections === 0, 10_000);
});

Deno.test("shutting the server down closes every connection with 1001", async () => {
  const h = await startHarness();
  try {
    const { client } = await h.connect("a1");
    client.send({ type: "subscribe", from_seq: 1 });
    await client.next();
    const closing = h.server.close();
    assert.deepStrictEqual(await within(client.closed, 10_000, "the shutdown close"), {
      code: 1001,
      reason: "server shutting down",
    });
    await closing;
  } finally {
    await h.dispose();
  }
});

Deno.test("a secret scrubbed at the append boundary appears in no frame", async () => {
  await using h = await startHarness();
  const secret = "sk-live-4f9a8b7c6d5e4f3a2b1c";
  await using ctxOwner = createContext({ mode: "test" });
  h.sessions.registerScrubber(ctxOwner, (text) => text.replaceAll(secret, "[REDACTED]"));
  const { client } = await h.connect("a1");
  client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  await client.take(2);
  await h.append(
    "a1",
    { type: "user/message", payload: { content: `use ${secret} for the API` } },
    {
      type: "tool/call",
      payload: { id: "call_1", name: "Bash", args: { command: `curl -H 'key: ${secret}' x` } },
    },
    {
      type: "tool/result",
      payload: { id: "call_1", name: "Bash", content: `echo ${secret}`, is_error: false },
    },
    chunk(`the key is ${secret}`),
  );
  const frames = await client.take(4);
  // An answer quoting client input passes the same scrubbers.
  client.send({ type: secret, ref: "r" });
  assert.deepStrictEqual(await client.next(), {
    type: "error",
    ref: "r",
    code: "unknown_type",
    message:
      'Cannot read the frame: unknown type "[REDACTED]" (expected one of subscribe, message, steer, cancel, set_policy, approve, set_persona, compact, dispose)',
  });
  const raw = JSON.stringify([...client.frames]);
  assert.equal(raw.includes(secret), false);
  assert.deepStrictEqual(
    frames.map((frame) => JSON.stringify(frame).split("[REDACTED]").length - 1),
    [1, 1, 1, 1],
  );
  await client.close();
});
