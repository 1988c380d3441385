/**
 * Client frames (docs/protocol.md §5): each lands on its seam and is acked by `ref`; every bad input gets its
 * documented answer and the connection stays open; an oversized frame closes with 1009; a flood is limited per
 * connection and affects no other agent.
 */
import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { RawClient, within } from "./_clients.ts";
import { eventFrame, startHarness, TOKEN } from "./_harness.ts";

const SUBSCRIBE = 'Cannot read the "subscribe" frame';
const MESSAGE = 'Cannot read the "message" frame';
const TYPES =
  "subscribe, message, steer, cancel, set_policy, approve, set_persona, compact, dispose";

function error(ref: unknown, code: string, message: string): Record<string, unknown> {
  return { type: "error", ref, code, message };
}

Deno.test("malformed JSON, unknown types, missing and bad fields each get an error and the connection stays open", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  const calm = await h.connect("calm");
  calm.client.send({ type: "subscribe", from_seq: 1, ref: "c" });
  assert.deepStrictEqual(await calm.client.take(2), [
    { type: "ack", ref: "c" },
    eventFrame((await h.sessions.read("calm"))[0]!),
  ]);
  const cases: [string, Record<string, unknown>][] = [
    ["{", error(null, "invalid_json", "Cannot read the frame: it is not valid JSON")],
    ["", error(null, "invalid_json", "Cannot read the frame: it is not valid JSON")],
    ["[1,2]", error(null, "invalid_json", "Cannot read the frame: it must be a JSON object")],
    ["null", error(null, "invalid_json", "Cannot read the frame: it must be a JSON object")],
    ['"subscribe"', error(null, "invalid_json", "Cannot read the frame: it must be a JSON object")],
    [
      '{"from_seq":1}',
      error(
        null,
        "unknown_type",
        `Cannot read the frame: it has no "type" (expected one of ${TYPES})`,
      ),
    ],
    [
      '{"type":"bogus","ref":7}',
      error(
        7,
        "unknown_type",
        `Cannot read the frame: unknown type "bogus" (expected one of ${TYPES})`,
      ),
    ],
    [
      '{"type":42,"ref":"r"}',
      error(
        "r",
        "unknown_type",
        `Cannot read the frame: unknown type 42 (expected one of ${TYPES})`,
      ),
    ],
    [
      '{"type":"hello","ref":"r"}',
      error(
        "r",
        "unknown_type",
        `Cannot read the frame: unknown type "hello" (expected one of ${TYPES})`,
      ),
    ],
    [
      `{"type":"subscribe","from_seq":1,"ref":"${"x".repeat(129)}"}`,
      error(
        null,
        "invalid_field",
        'Cannot read the frame: "ref" must be a string of at most 128 characters or a safe integer',
      ),
    ],
    [
      '{"type":"subscribe","from_seq":1,"ref":1.5}',
      error(
        null,
        "invalid_field",
        'Cannot read the frame: "ref" must be a string of at most 128 characters or a safe integer',
      ),
    ],
    [
      '{"type":"subscribe","ref":1}',
      error(1, "invalid_field", `${SUBSCRIBE}: "from_seq" is missing`),
    ],
    ...[["1.5", "1.5"], ['"1"', '"1"'], ["0", "0"], ["-3", "-3"], [
      "9007199254740992",
      "9007199254740992",
    ], [
      "null",
      "null",
    ], ["true", "true"]].map(([raw, shown]): [string, Record<string, unknown>] => [
      `{"type":"subscribe","from_seq":${raw},"ref":"s"}`,
      error("s", "invalid_field", `${SUBSCRIBE}: "from_seq" must be an integer >= 1, got ${shown}`),
    ]),
    [
      '{"type":"subscribe","form_seq":1,"ref":"s"}',
      error("s", "invalid_field", `${SUBSCRIBE}: unknown field "form_seq"`),
    ],
    [
      '{"type":"message","ref":"m"}',
      error("m", "invalid_field", `${MESSAGE}: "content" is missing`),
    ],
    ...['""', "[]", "{}", "3", "null"].map((raw): [string, Record<string, unknown>] => [
      `{"type":"message","content":${raw},"ref":"m"}`,
      error(
        "m",
        "invalid_field",
        `${MESSAGE}: "content" must be a non-empty string or a non-empty array of content parts`,
      ),
    ]),
    [
      '{"type":"message","content":[{"type":"text","text":"a"},{"type":"text"}],"ref":"m"}',
      error("m", "invalid_field", `${MESSAGE}: "content[1].text" must be a string`),
    ],
    [
      '{"type":"message","content":[{"type":"video","url":"x"}],"ref":"m"}',
      error("m", "invalid_field", `${MESSAGE}: "content[0].type" must be "text" or "image"`),
    ],
    [
      '{"type":"message","content":[{"type":"image"}],"ref":"m"}',
      error(
        "m",
        "invalid_field",
        `${MESSAGE}: "content[0]" must have a "url", or "data" and "media_type"`,
      ),
    ],
    [
      '{"type":"message","content":[{"type":"text","text":"a","extra":1}],"ref":"m"}',
      error("m", "invalid_field", `${MESSAGE}: unknown field "content[0].extra"`),
    ],
    [
      '{"type":"message","content":"hi","wake":true,"ref":"m"}',
      error("m", "invalid_field", `${MESSAGE}: unknown field "wake"`),
    ],
    [
      '{"type":"steer","content":"x","wake":"yes","ref":"st"}',
      error(
        "st",
        "invalid_field",
        'Cannot read the "steer" frame: "wake" must be a boolean, got "yes"',
      ),
    ],
    [
      '{"type":"cancel","reason":7,"ref":"c"}',
      error(
        "c",
        "invalid_field",
        'Cannot read the "cancel" frame: "reason" must be a string of at most 1024 characters',
      ),
    ],
    [
      '{"type":"set_policy","ref":"p"}',
      error("p", "invalid_field", 'Cannot read the "set_policy" frame: "allow" is missing'),
    ],
    [
      '{"type":"set_policy","allow":"Read","ref":"p"}',
      error(
        "p",
        "invalid_field",
        'Cannot read the "set_policy" frame: "allow" must be an array of at most 256 patterns',
      ),
    ],
    [
      '{"type":"set_policy","allow":["Read",""],"ref":"p"}',
      error(
        "p",
        "invalid_field",
        'Cannot read the "set_policy" frame: "allow[1]" must be a non-empty string of at most 256 characters',
      ),
    ],
    [
      '{"type":"approve","decision":"allow","ref":"ap"}',
      error("ap", "invalid_field", 'Cannot read the "approve" frame: "request_id" is missing'),
    ],
    [
      '{"type":"approve","request_id":"r1","decision":"maybe","ref":"ap"}',
      error(
        "ap",
        "invalid_field",
        'Cannot read the "approve" frame: "decision" must be "allow" or "deny", got "maybe"',
      ),
    ],
  ];
  for (const [text, expected] of cases) {
    client.socket.send(text);
    assert.deepStrictEqual([text, await client.next()], [text, expected]);
  }
  // Still open, still working.
  client.send({ type: "subscribe", from_seq: 1, ref: "ok" });
  assert.deepStrictEqual(await client.take(2), [
    { type: "ack", ref: "ok" },
    eventFrame((await h.sessions.read("a1"))[0]!),
  ]);
  await client.close();
  // Another agent's connection was never disturbed: its stream and its frames still work.
  const [event] = await h.append("calm", { type: "turn/start", payload: {} });
  calm.client.send({ type: "cancel", ref: "still" });
  const rest = await calm.client.take(2);
  assert.deepStrictEqual(rest.filter((frame) => frame.type === "event"), [eventFrame(event!)]);
  assert.deepStrictEqual(rest.filter((frame) => frame.type === "ack"), [{
    type: "ack",
    ref: "still",
  }]);
  await calm.client.close();
  assert.deepStrictEqual(h.agents.calls, [
    { verb: "open", agent_id: "a1" },
    { verb: "open", agent_id: "calm" },
    { verb: "cancel", agent_id: "calm", reason: null },
  ]);
});

Deno.test("message, steer and cancel land on the agent and are acked by ref; a frame without ref gets no ack", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  client.send({ type: "message", content: "What is in notes.txt?", ref: "m1" });
  client.send({
    type: "message",
    content: [{ type: "text", text: "and this" }, {
      type: "image",
      data: "aGk=",
      media_type: "image/png",
    }],
    ref: 2,
  });
  client.send({ type: "steer", content: "prefer short answers", ref: "s1" });
  client.send({ type: "steer", content: "look at the log", wake: true, ref: "s2" });
  client.send({ type: "cancel" });
  client.send({ type: "cancel", reason: "operator stop", ref: "c2" });
  assert.deepStrictEqual(await client.take(5), [
    { type: "ack", ref: "m1" },
    { type: "ack", ref: 2 },
    { type: "ack", ref: "s1" },
    { type: "ack", ref: "s2" },
    { type: "ack", ref: "c2" },
  ]);
  assert.deepStrictEqual(h.agents.calls, [
    { verb: "open", agent_id: "a1" },
    { verb: "message", agent_id: "a1", content: "What is in notes.txt?" },
    {
      verb: "message",
      agent_id: "a1",
      content: [{ type: "text", text: "and this" }, {
        type: "image",
        data: "aGk=",
        media_type: "image/png",
      }],
    },
    { verb: "steer", agent_id: "a1", content: "prefer short answers", wake: false },
    { verb: "steer", agent_id: "a1", content: "look at the log", wake: true },
    { verb: "cancel", agent_id: "a1", reason: null },
    { verb: "cancel", agent_id: "a1", reason: "operator stop" },
  ]);
  h.agents.refuseMessages = new TerretError("InboxFull", "Cannot queue input: the inbox is full");
  client.send({ type: "message", content: "one more", ref: "m3" });
  assert.deepStrictEqual(
    await client.next(),
    error("m3", "internal", "Cannot queue the message: Cannot queue input: the inbox is full"),
  );
  await client.close();
});

Deno.test("set_policy appends policy/updated and acks once it is durable; approve answers not_supported", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  client.send({ type: "set_policy", allow: ["Read", "mcp__nexus__*"], ref: "p1" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "p1" });
  const events = await h.sessions.read("a1");
  assert.deepStrictEqual(
    events.map((event) => [event.seq, event.type, event.payload]),
    [[1, "session/created", { meta: { agent_id: "a1" } }], [2, "policy/updated", {
      allow: ["Read", "mcp__nexus__*"],
    }]],
  );
  client.send({ type: "set_policy", allow: [], ref: "p2" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "p2" });
  client.send({ type: "approve", request_id: "req-1", decision: "allow", ref: "a1" });
  assert.deepStrictEqual(
    await client.next(),
    error(
      "a1",
      "not_supported",
      'Cannot resolve approval "req-1": durable approvals are not enabled on this server (config row ' +
        "approvals)",
    ),
  );
  client.send({ type: "subscribe", from_seq: 2, ref: "s" });
  assert.deepStrictEqual(await client.take(3), [
    { type: "ack", ref: "s" },
    ...(await h.sessions.read("a1", { from_seq: 2 })).map(eventFrame),
  ]);
  await client.close();
});

Deno.test("a second subscribe and a from_seq ahead of the head are refused", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  client.send({ type: "subscribe", from_seq: 3, ref: "ahead" });
  assert.deepStrictEqual(
    await client.next(),
    error(
      "ahead",
      "from_seq_ahead",
      "Cannot subscribe from seq 3: the session's head is 1, so from_seq may be at most 2",
    ),
  );
  client.send({ type: "subscribe", from_seq: 2, ref: "s" });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
  client.send({ type: "subscribe", from_seq: 1, ref: "again" });
  assert.deepStrictEqual(
    await client.next(),
    error("again", "already_subscribed", "Cannot subscribe: this connection is already subscribed"),
  );
  const [event] = await h.append("a1", { type: "turn/start", payload: {} });
  assert.deepStrictEqual(await client.next(), eventFrame(event!));
  await client.close();
});

Deno.test("a binary frame is refused and the connection stays open", async () => {
  await using h = await startHarness();
  const { client } = await h.connect("a1");
  client.socket.send(new Uint8Array([123, 125]));
  assert.deepStrictEqual(
    await client.next(),
    error(
      null,
      "binary_not_supported",
      "Cannot read a binary frame: the protocol is JSON in text frames",
    ),
  );
  client.send({ type: "cancel", ref: 1 });
  assert.deepStrictEqual(await client.next(), { type: "ack", ref: 1 });
  await client.close();
});

Deno.test("a frame over max_frame_bytes (counted in UTF-8 bytes) closes the connection with 1009", async () => {
  await using h = await startHarness({ max_frame_bytes: 1024 });
  const headers = { Authorization: `Bearer ${TOKEN}` };
  // Exactly the limit is read (and refused as JSON), a byte more closes.
  const { client } = await RawClient.upgrade(h.port, "/v1/agents/a1/stream", headers);
  try {
    assert.equal(
      JSON.parse(new TextDecoder().decode((await client.readFrame())!.payload)).type,
      "hello",
    );
    await client.sendText("x".repeat(1024));
    assert.equal(
      JSON.parse(new TextDecoder().decode((await client.readFrame())!.payload)).code,
      "invalid_json",
    );
    await client.sendText("é".repeat(513)); // 513 characters, 1026 bytes
    assert.deepStrictEqual(await within(client.readUntilClose(), 10_000, "the close"), {
      frames: [],
      close: { code: 1009, reason: "frame too big" },
    });
  } finally {
    client.close();
  }
  // Another connection is unaffected.
  const other = await h.connect("a2");
  other.client.send({ type: "cancel", ref: "still" });
  assert.deepStrictEqual(await other.client.next(), { type: "ack", ref: "still" });
  await other.client.close();
});

/** Connects a raw client to `agent` and reads its hello. */
async function rawConnect(port: number, agent: string): Promise<RawClient> {
  const { client } = await RawClient.upgrade(port, `/v1/agents/${agent}/stream`, {
    Authorization: `Bearer ${TOKEN}`,
  });
  const hello = await client.readFrame();
  assert.equal(JSON.parse(new TextDecoder().decode(hello!.payload)).type, "hello");
  return client;
}

Deno.test("1,000 frames from one client: frame_rate acked, one rate_limited, then 1008; another agent is unaffected", async () => {
  // A frozen clock makes the bucket exact: it never refills during the burst.
  await using h = await startHarness({}, { now: () => 0 });
  const calm = await h.connect("calm");
  calm.client.send({ type: "subscribe", from_seq: 1, ref: "s" });
  assert.deepStrictEqual(await calm.client.take(2), [
    { type: "ack", ref: "s" },
    eventFrame((await h.sessions.read("calm"))[0]!),
  ]);
  const answers = [
    ...Array.from({ length: 100 }, (_, i) => ({ type: "ack", ref: i })),
    error(
      null,
      "rate_limited",
      "Cannot accept more frames: over 100 frames per second (frames are dropped until the rate falls)",
    ),
  ];
  // Exactly enough frames to be closed (100 accepted, then 100 dropped), then silence: the whole answer arrives.
  const exact = await rawConnect(h.port, "flood-1");
  try {
    for (let i = 0; i < 200; i++) await exact.sendText(JSON.stringify({ type: "cancel", ref: i }));
    assert.deepStrictEqual(await within(exact.readUntilClose(), 10_000, "the close"), {
      frames: answers,
      close: { code: 1008, reason: "rate limit exceeded" },
    });
  } finally {
    exact.close();
  }
  // A thousand frames: the same verdict. Deno ends a connection abruptly when frames keep arriving after the
  // server's close, so this client sees a prefix of the same answers and then the end of the connection.
  const flood = await rawConnect(h.port, "flood-2");
  try {
    const reading = within(flood.readUntilClose(), 10_000, "the flood's end");
    for (let i = 0; i < 1000; i++) {
      try {
        await flood.sendText(JSON.stringify({ type: "cancel", ref: i }));
      } catch {
        break; // the server dropped the connection
      }
    }
    const { frames, close } = await reading;
    assert.deepStrictEqual(frames, answers.slice(0, frames.length));
    assert.ok(close === undefined || close.code === 1008, `ended by ${JSON.stringify(close)}`);
  } finally {
    flood.close();
  }
  // Each flooding connection reached the agent exactly frame_rate times; the calm one is untouched and its
  // frames are still answered and its events still flow.
  for (const agent of ["flood-1", "flood-2"]) {
    assert.deepStrictEqual(
      [agent, h.agents.calls.filter((call) => call.agent_id === agent).length],
      [agent, 1 + 100],
    );
  }
  calm.client.send({ type: "message", content: "hello", ref: "m" });
  assert.deepStrictEqual(await calm.client.next(), { type: "ack", ref: "m" });
  const [event] = await h.append("calm", { type: "turn/start", payload: {} });
  assert.deepStrictEqual(await calm.client.next(), eventFrame(event!));
  await calm.client.close();
  assert.deepStrictEqual(h.agents.calls.filter((call) => call.agent_id === "calm"), [
    { verb: "open", agent_id: "calm" },
    { verb: "message", agent_id: "calm", content: "hello" },
  ]);
});
