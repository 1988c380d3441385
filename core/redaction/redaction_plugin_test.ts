import assert from "node:assert/strict";
import { z } from "zod";
import { createToolStack, type ToolStack } from "../tools/testing.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { RedactionKey, redactionPlugin, redactionToken } from "./redaction_plugin.ts";
import { CredentialsKey, credentialsPlugin } from "./credentials.ts";
import { DEFAULT_REDACTION_TOKEN } from "./redactor.ts";

const SECRET = "sk-or-v1-0123456789abcdefABCDEF";
const T = DEFAULT_REDACTION_TOKEN;

async function stack(config: Record<string, unknown> = {}): Promise<ToolStack> {
  const s = await createToolStack({ allow: ["*"] });
  s.ctx.plugin(redactionPlugin, config, { id: "redaction" });
  await s.ctx.idle();
  await s.sessions.create({ session_id: "s1" });
  return s;
}

function stored(events: readonly SessionEvent[]): string {
  return JSON.stringify(events);
}

Deno.test("a secret in a tool result and in a tool's error never reaches the stored log", async () => {
  await using s = await stack();
  s.tools.register(s.ctx, {
    name: "Leak",
    description: "Returns a secret",
    parameters: z.object({ fail: z.boolean() }),
    mutating: false,
    handler: ({ fail }) => {
      if (fail) throw new Error(`auth failed with ${SECRET}`);
      return [{ type: "text", text: `key=${SECRET}` }];
    },
  });
  const run = { ctx: s.ctx, session_id: "s1", agent_id: "a1" };
  const ok = await s.tools.execute({ id: "c1", name: "Leak", args: { fail: false } }, run);
  const bad = await s.tools.execute({ id: "c2", name: "Leak", args: { fail: true } }, run);
  assert.deepStrictEqual(ok, {
    id: "c1",
    name: "Leak",
    content: [{ type: "text", text: `key=${T}` }],
    is_error: false,
  });
  assert.deepStrictEqual(bad, {
    id: "c2",
    name: "Leak",
    content: `Tool "Leak" failed: auth failed with ${T}`,
    is_error: true,
  });
  await s.sessions.append("s1", { type: "tool/result", payload: ok });
  await s.sessions.append("s1", { type: "tool/result", payload: bad });
  assert.equal(stored(await s.sessions.read("s1")).includes(SECRET), false);
});

Deno.test("the scrubber covers a user message, a steer, tool call args (values and keys), never ids", async () => {
  await using s = await stack();
  assert.equal(s.sessions.scrubbing, true);
  await s.sessions.append("s1", { type: "user/message", payload: { content: `use ${SECRET}` } });
  await s.sessions.append("s1", {
    type: "context/injected",
    payload: { content: [{ type: "text", text: SECRET }] },
  });
  await s.sessions.append("s1", {
    type: "tool/call",
    payload: { id: SECRET, name: "Bash", args: { env: { [SECRET]: SECRET } } },
  });
  const events = await s.sessions.read("s1", { from_seq: 2 });
  assert.deepStrictEqual(events.map((event) => event.payload), [
    { content: `use ${T}` },
    { content: [{ type: "text", text: T }] },
    { id: SECRET, name: "Bash", args: { env: { [T]: T } } },
  ]);
  assert.deepStrictEqual(
    [
      s.ctx.get(RedactionKey).isRedacted(events[2]!.payload),
      redactionToken(s.ctx),
      s.sessions.redactionMarkers(),
    ],
    [true, T, [T]],
  );
});

Deno.test("the assistant message is scrubbed whole: a secret straddling a tool call never reaches the model context", async () => {
  await using s = await stack();
  const [head, tail] = [SECRET.slice(0, 12), SECRET.slice(12)];
  await s.sessions.append("s1", {
    type: "assistant/message",
    payload: {
      parts: [
        { type: "text", text: `the key is ${SECRET}` },
        { type: "tool_call", id: "call_1", name: "Bash", args: { command: `echo ${SECRET}` } },
      ],
    },
  });
  // Either side of a run boundary, each piece alone matches nothing: only the concatenation is the secret.
  await s.sessions.append("s1", { type: "assistant/chunk", payload: { kind: "text", text: head } });
  await s.sessions.append("s1", { type: "assistant/chunk", payload: { kind: "text", text: tail } });
  const messages = await s.sessions.deriveMessages("s1");
  assert.deepStrictEqual(messages, [{
    role: "assistant",
    parts: [
      { type: "text", text: `the key is ${T}` },
      { type: "tool_call", id: "call_1", name: "Bash", args: { command: `echo ${T}` } },
    ],
  }]);
  assert.equal(JSON.stringify(messages).includes(SECRET), false);
});

Deno.test("coalescing contract: with a scrubber mounted, a run of text appended whole hides a secret split at every offset", async () => {
  // The loop appends each run of assistant text as ONE assistant/chunk whenever `sessions.scrubbing` is true.
  // Here the run is every split of the secret inside surrounding text, as two deltas; the end-to-end version
  // through the loop lives with the loop.
  await using s = await stack();
  assert.equal(s.sessions.scrubbing, true);
  const text = `prefix ${SECRET} suffix`;
  const start = text.indexOf(SECRET);
  for (let cut = start + 1; cut < start + SECRET.length; cut++) {
    const deltas = [text.slice(0, cut), text.slice(cut)];
    await s.sessions.append("s1", {
      type: "assistant/chunk",
      payload: { kind: "text", text: deltas.join("") },
    });
  }
  const chunks = await s.sessions.read("s1", { types: ["assistant/chunk"] });
  assert.equal(chunks.length, SECRET.length - 1);
  for (const chunk of chunks) {
    assert.deepStrictEqual(chunk.payload, { kind: "text", text: `prefix ${T} suffix` });
  }
});

Deno.test("without any scrubber, sessions.scrubbing is false; it follows the redaction row's lifetime", async () => {
  await using s = await createToolStack({ allow: [] });
  assert.equal(s.sessions.scrubbing, false);
  const fiber = s.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
  await s.ctx.idle();
  assert.equal(s.sessions.scrubbing, true);
  await fiber.dispose();
  assert.equal(s.sessions.scrubbing, false);
  assert.equal(redactionToken(s.ctx), T);
});

Deno.test("a configured token and patterns apply to results and the log", async () => {
  await using s = await stack({ patterns: ["tok_[0-9]{6}"], replacement: "SECRET_GONE" });
  await s.sessions.append("s1", { type: "user/message", payload: { content: "tok_123456 ok" } });
  const [event] = await s.sessions.read("s1", { types: ["user/message"] });
  assert.deepStrictEqual(event!.payload, { content: "SECRET_GONE ok" });
  assert.equal(s.ctx.get(RedactionKey).token, "SECRET_GONE");
});

Deno.test("credentials: the environment wins, the config value is the fallback, every resolved value is redacted", async () => {
  const env = "TERRET_TEST_CRED_" + crypto.randomUUID().replaceAll("-", "_");
  const fromEnv = "env-secret-" + crypto.randomUUID();
  Deno.env.set(env, fromEnv);
  try {
    await using s = await createToolStack({ allow: ["*"] });
    s.ctx.plugin(credentialsPlugin, {
      providers: {
        alpha: {
          env: ["TERRET_UNSET_" + crypto.randomUUID().slice(0, 4), env],
          value: "cfg-alpha",
        },
        beta: { env: [], value: "cfg-beta-value" },
      },
    }, { id: "credentials" });
    await s.ctx.idle();
    const credentials = s.ctx.get(CredentialsKey);
    assert.deepStrictEqual(
      [credentials.resolve("alpha"), credentials.resolve("beta"), credentials.resolve("gamma")],
      [fromEnv, "cfg-beta-value", undefined],
    );
    assert.deepStrictEqual(credentials.names(), ["alpha", "beta"]);
    await s.sessions.create({ session_id: "s1" });
    await s.sessions.append("s1", {
      type: "user/message",
      payload: { content: `${fromEnv} and cfg-beta-value` },
    });
    const [event] = await s.sessions.read("s1", { types: ["user/message"] });
    assert.deepStrictEqual(event!.payload, { content: `${T} and ${T}` });
    s.tools.register(s.ctx, {
      name: "Echo",
      description: "Echoes",
      parameters: z.object({ text: z.string() }),
      handler: ({ text }) => text,
    });
    // The token follows the redaction row's when one is mounted.
    s.ctx.plugin(redactionPlugin, { replacement: "GONE" }, { id: "redaction" });
    await s.ctx.idle();
    const result = await s.tools.execute(
      { id: "c1", name: "Echo", args: { text: `x ${fromEnv}` } },
      { ctx: s.ctx, session_id: "s1", agent_id: "a" },
    );
    assert.deepStrictEqual(result.content, "x GONE");
    // The loop's resume refuses an owed call carrying any declared marker: both tokens are declared.
    assert.deepStrictEqual(s.sessions.redactionMarkers(), [T, "GONE"]);
  } finally {
    Deno.env.delete(env);
  }
});
