/**
 * Instructions over the socket (docs/protocol.md, "Giving an agent its instructions"): the `prompt` row's system
 * prompt (with per-agent-id-glob overrides), the persona an orchestrator sets with `set_persona` before the first
 * `message` of a new agent, amendments later in its life, and the environment section fixed at session creation.
 * Each model request's system prompt is checked byte for byte; the durable events match
 * `tests/golden/ws/persona_*.jsonl`.
 */
import assert from "node:assert/strict";
import { defineService } from "@terret/hames";
import type { SessionEvent } from "@terret/core";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { type Frame, WsClient } from "./_clients.ts";
import { assertGolden } from "./_golden.ts";
import { eventFrame, TOKEN, TOKENS } from "./_harness.ts";

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

async function serve(
  replies: number,
  promptConfig: unknown,
): Promise<{
  stack: Awaited<ReturnType<typeof createAgentStack>>;
  adapter: ReturnType<typeof scriptedAdapter>;
  open(agentId: string): Promise<WsClient>;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const adapter = scriptedAdapter(
    Array.from({ length: replies }, (_, i) => textReply(`Reply ${i + 1}.`)),
  );
  const stack = await createAgentStack({ adapter, promptConfig });
  stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
  await stack.ctx.idle();
  const port = stack.ctx.get(WsServiceKey).port;
  return {
    stack,
    adapter,
    async open(agentId) {
      const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`, {
        token: TOKEN,
      });
      assert.equal((await client.next()).type, "hello");
      client.send({ type: "subscribe", from_seq: 1, ref: "s" });
      assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
      return client;
    },
    [Symbol.asyncDispose]: () => stack.dispose(),
  };
}

const INSTRUCTIONS = {
  system: "You are a Terret agent. Use absolute paths.",
  agents: [{ match: "reviewer-*", system: "You review patches; you never edit files." }],
};

Deno.test("set_persona before the first message gives a new agent its instructions; a later one amends them", async () => {
  await using h = await serve(2, INSTRUCTIONS);
  const client = await h.open("worker-1");
  client.send({
    type: "set_persona",
    content: "You are Ada, the release engineer.",
    replace: true,
    ref: "p",
  });
  client.send({ type: "message", content: "Ship it?", ref: "m" });
  await client.readUntil(isTurnEnd);
  client.send({ type: "set_persona", content: "Answer in French from now on.", ref: "p2" });
  client.send({ type: "message", content: "And now?", ref: "m2" });
  await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(client.frames.filter((frame) => frame.type !== "event"), [
    { type: "hello", protocol: 1, agent_id: "worker-1", session_id: "worker-1", head_seq: 0 },
    { type: "ack", ref: "s" },
    { type: "ack", ref: "p" },
    { type: "ack", ref: "m" },
    { type: "ack", ref: "p2" },
    { type: "ack", ref: "m2" },
  ]);
  assert.deepStrictEqual(h.adapter.requests.map((request) => request.system), [
    "You are a Terret agent. Use absolute paths.\n\nYou are Ada, the release engineer.",
    "You are a Terret agent. Use absolute paths.\n\nYou are Ada, the release engineer.\n\n" +
    "Amendments to the instructions above (they take precedence; the newest is last):\n\n" +
    "Answer in French from now on.",
  ]);
  const events = client.frames.filter((frame) => frame.type === "event");
  assert.deepStrictEqual(events, (await h.stack.sessions.read("worker-1")).map(eventFrame));
  await assertGolden("persona_at_creation_and_amended", events);
  await client.close();
});

Deno.test("an agent id matching an override glob gets that system prompt instead of the default", async () => {
  await using h = await serve(1, INSTRUCTIONS);
  const client = await h.open("reviewer-7");
  client.send({ type: "message", content: "Look at this", ref: "m" });
  await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(h.adapter.requests.map((request) => request.system), [
    "You review patches; you never edit files.",
  ]);
  await client.close();
});

Deno.test("the environment section is recorded at creation and renders the same bytes after the config changes", async () => {
  await using h = await serve(2, { environment: true });
  const client = await h.open("env-1");
  client.send({ type: "message", content: "Where am I?", ref: "m" });
  await client.readUntil(isTurnEnd);
  const created = (await h.stack.sessions.read("env-1"))[0]!;
  assert.deepStrictEqual(created.payload, {
    meta: {
      environment: {
        cwd: "",
        workdirs: [],
        platform: Deno.build.os,
        sandbox: "",
        isolated: false,
        approvals: false,
      },
      agent_id: "env-1",
    },
  });
  const expected = [
    "# Environment",
    "- Working directory: none granted",
    "- Workspace directories: none",
    `- Platform: ${Deno.build.os}`,
    `- Session created: ${created.at.slice(0, 10)}`,
    "- Sandbox: none mounted: programs cannot run",
    "- Approvals: none; a tool the policy does not allow is refused at once",
  ].join("\n");
  // A host change after creation (here: an approvals service appearing) does not reach the session's prompt.
  h.stack.ctx.provide(
    defineService<object>("approvals", "An approvals service appearing later"),
    {},
  );
  client.send({ type: "message", content: "And now?", ref: "m2" });
  await client.readUntil(isTurnEnd);
  assert.deepStrictEqual(h.adapter.requests.map((request) => request.system), [
    expected,
    expected,
  ]);
  await client.close();
});

Deno.test("set_persona refuses bad fields with an error frame and appends nothing", async () => {
  await using h = await serve(0, {});
  const client = await h.open("strict");
  const cases: [Record<string, unknown>, string][] = [
    [{ type: "set_persona", ref: "a" }, '"content" is missing'],
    [
      { type: "set_persona", content: 7, ref: "a" },
      '"content" must be a string of at most 65536 characters',
    ],
    [
      { type: "set_persona", content: "x".repeat(65_537), ref: "a" },
      '"content" must be a string of at most 65536 characters',
    ],
    [
      { type: "set_persona", content: "hi", replace: "yes", ref: "a" },
      '"replace" must be a boolean, got "yes"',
    ],
    [
      { type: "set_persona", content: "", ref: "a" },
      '"content" must not be empty unless "replace" is true (which clears the persona)',
    ],
    [{ type: "set_persona", content: "hi", extra: 1, ref: "a" }, 'unknown field "extra"'],
  ];
  for (const [frame, message] of cases) {
    client.send(frame);
    assert.deepStrictEqual(await client.next(), {
      type: "error",
      ref: "a",
      code: "invalid_field",
      message: `Cannot read the "set_persona" frame: ${message}`,
    });
  }
  // Refused frames create nothing: the session does not exist yet.
  assert.equal(await h.stack.sessions.head("strict"), 0);
  await client.close();
});
