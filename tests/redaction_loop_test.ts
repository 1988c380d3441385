/**
 * Redaction end to end through the loop: the `redaction` row (patterns on tools/post_execute and the log's
 * scrubber) with agents driven by a scripted model. A secret split across two stream deltas at every offset, in a
 * tool result, in a user message and in a tool call's argument key never reaches the stored log; resume refuses an
 * owed call whose arguments the row redacted.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { DEFAULT_REDACTION_TOKEN } from "@terret/core/redaction";
import { redactionPlugin } from "@terret/core";
import {
  createAgentStack,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";

const SECRET = "sk-or-v1-0123456789abcdefABCDEF";
const T = DEFAULT_REDACTION_TOKEN;

Deno.test("loop + redaction row: a secret split across two deltas at every offset never reaches the log", async () => {
  const text = `key: ${SECRET} ok`;
  const start = text.indexOf(SECRET);
  const replies = [];
  for (let cut = start + 1; cut < start + SECRET.length; cut++) {
    replies.push(textReply([text.slice(0, cut), text.slice(cut)]));
  }
  await using stack = await createAgentStack({ adapter: scriptedAdapter(replies), allow: [] });
  stack.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
  await stack.ctx.idle();
  const agent = await stack.agents.ensure("a1");
  for (let i = 0; i < replies.length; i++) {
    agent.send(`turn ${i}`);
    await agent.idle();
  }
  const events = await stack.sessions.read("a1");
  assert.equal(JSON.stringify(events).includes(SECRET), false);
  const chunks = events.filter((event) => event.type === "assistant/chunk").map((event) =>
    event.payload
  );
  assert.equal(chunks.length, replies.length);
  for (const chunk of chunks) assert.deepStrictEqual(chunk, { kind: "text", text: `key: ${T} ok` });
});

Deno.test("loop + redaction row: a tool result, a user message and an argument key are scrubbed", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "leak", args: { env: { [SECRET]: "v" } } }]),
    textReply("done"),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["leak"] });
  stack.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
  await stack.ctx.idle();
  stack.tools.register(stack.ctx, {
    name: "leak",
    description: "returns a secret",
    parameters: z.looseObject({}),
    approval: "never",
    handler: () => `found ${SECRET}`,
  });
  const agent = await stack.agents.ensure("a2");
  agent.send(`my key is ${SECRET}`);
  await agent.idle();
  const events = await stack.sessions.read("a2");
  assert.equal(JSON.stringify(events).includes(SECRET), false);
  const pick = (type: string) =>
    events.filter((event) => event.type === type).map((event) => event.payload);
  assert.deepStrictEqual(pick("user/message"), [{ content: `my key is ${T}` }]);
  assert.deepStrictEqual(pick("tool/call"), [{
    id: "c1",
    name: "leak",
    args: { env: { [T]: "v" } },
  }]);
  assert.deepStrictEqual(pick("tool/result"), [{
    id: "c1",
    name: "leak",
    content: `found ${T}`,
    is_error: false,
  }]);
});

Deno.test("loop + redaction row: resume refuses an owed call whose arguments the row redacted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-redaction-resume-" });
  try {
    const path = `${dir}/s.db`;
    {
      const adapter = scriptedAdapter([
        toolCallsReply([{ id: "c1", name: "login", args: { token: SECRET } }]),
      ]);
      await using first = await createAgentStack({ adapter, allow: ["login"], sqlitePath: path });
      first.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
      await first.ctx.idle();
      const held = scriptedTool("login", { held: true });
      first.tools.register(first.ctx, held.definition);
      const agent = await first.agents.ensure("r1");
      agent.send("log in");
      await held.started(1);
    }
    await using second = await createAgentStack({
      adapter: scriptedAdapter([textReply("ok")]),
      allow: ["login"],
      sqlitePath: path,
    });
    second.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
    await second.ctx.idle();
    const login = scriptedTool("login");
    second.tools.register(second.ctx, login.definition);
    const agent = await second.agents.ensure("r1");
    assert.equal(agent.wake(), true);
    await agent.idle();
    assert.equal(login.calls.length, 0);
    const results = (await second.sessions.read("r1")).filter((event) =>
      event.type === "tool/result"
    );
    assert.equal(results.length, 1);
    assert.equal((results[0]!.payload as { is_error: boolean }).is_error, true);
    assert.equal(JSON.stringify(await second.sessions.read("r1")).includes(SECRET), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
