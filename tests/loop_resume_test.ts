/**
 * Resume: a turn interrupted mid-tool-call or mid-stream (the process stopping with the turn open: here the whole
 * stack is disposed, which abandons the turn exactly where it is and closes the SQLite file) is re-entered from the
 * log on the next wake in a fresh stack over the same file. Owed calls run again (at-least-once), except one whose
 * logged arguments were redacted, which is refused.
 */
import assert from "node:assert/strict";
import {
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import type { AgentStack } from "@terret/core/testing";
import { assertGolden } from "./fixtures/golden.ts";

async function tempDb(): Promise<{ path: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "terret-resume-" });
  return {
    path: `${dir}/sessions.db`,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function redact(stack: AgentStack): void {
  stack.sessions.registerScrubber(
    stack.ctx,
    (text) => text.replaceAll(/sk-[a-z0-9]+/g, "[REDACTED]"),
    { marker: "[REDACTED]" },
  );
}

Deno.test("resume: a turn interrupted mid-tool-call re-executes the owed calls and refuses a redacted one", async () => {
  await using db = await tempDb();
  {
    const adapter = scriptedAdapter([
      toolCallsReply([
        { id: "c1", name: "fetch", args: { url: "https://example.test/a" } },
        { id: "c2", name: "login", args: { token: "sk-abc123" } },
      ]),
    ]);
    await using first = await createAgentStack({
      adapter,
      allow: ["fetch", "login"],
      sqlitePath: db.path,
    });
    redact(first);
    const fetch = scriptedTool("fetch", { held: true });
    const login = scriptedTool("login", { held: true });
    first.tools.register(first.ctx, fetch.definition);
    first.tools.register(first.ctx, login.definition);
    const agent = await first.agents.ensure("crashy");
    agent.send("Fetch a, then log in");
    await fetch.started(1);
    await login.started(1);
    // The stack goes down with both calls in flight: nothing more is appended.
  }
  await using second = await createAgentStack({
    adapter: scriptedAdapter([textReply("Fetched a; logging in needs a fresh token.")]),
    allow: ["fetch", "login"],
    sqlitePath: db.path,
  });
  redact(second);
  const fetch = scriptedTool("fetch");
  const login = scriptedTool("login");
  second.tools.register(second.ctx, fetch.definition);
  second.tools.register(second.ctx, login.definition);
  const agent = await second.agents.ensure("crashy");
  assert.equal(agent.status, "idle");
  assert.equal(agent.wake(), true);
  await agent.idle();
  assert.deepStrictEqual(fetch.calls.map((call) => call.args), [{ url: "https://example.test/a" }]);
  assert.equal(login.calls.length, 0);
  await assertGolden("loop/resume_mid_tool", eventShapes(await second.sessions.read("crashy")));
  assert.equal(agent.wake(), false);
});

Deno.test("resume: a turn interrupted mid-stream sends the step's request again, then takes the queued message", async () => {
  await using db = await tempDb();
  {
    const adapter = scriptedAdapter([[
      { type: "message_start" },
      { type: "text_delta", text: "Thinking about" },
      { type: "gate", gate: "never" },
    ]]);
    await using first = await createAgentStack({ adapter, allow: [], sqlitePath: db.path });
    const agent = await first.agents.ensure("midstream");
    agent.send("Question one");
    await adapter.reached("never");
    // Down only once the streamed chunk is in the log, as a process that had logged it would be.
    for await (const event of first.sessions.stream("midstream")) {
      if (event.type === "assistant/chunk") break;
    }
  }
  const adapter = scriptedAdapter([textReply("Answer one."), textReply("Answer two.")]);
  await using second = await createAgentStack({ adapter, allow: [], sqlitePath: db.path });
  const agent = await second.agents.ensure("midstream");
  agent.send("Question two");
  await agent.idle();
  await assertGolden(
    "loop/resume_mid_stream",
    eventShapes(await second.sessions.read("midstream")),
  );
  assert.deepStrictEqual(
    adapter.requests[0]!.messages,
    [{ role: "user", parts: [{ type: "text", text: "Question one" }] }],
  );
});

Deno.test("resume: an open turn with no step closes as rejected when nothing waits, or takes the waking input", async () => {
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([textReply("Hello.")]),
    allow: [],
  });
  for (const id of ["empty", "waiting"]) {
    await stack.sessions.create({ session_id: id, meta: { agent_id: id } });
    await stack.sessions.append(id, { type: "turn/start", payload: { agent_id: id } });
  }
  const empty = await stack.agents.ensure("empty");
  assert.equal(empty.wake(), true);
  await empty.idle();
  const waiting = await stack.agents.ensure("waiting");
  waiting.send("Hi");
  await waiting.idle();
  await assertGolden("loop/resume_no_step", [
    ...eventShapes(await stack.sessions.read("empty")),
    ...eventShapes(await stack.sessions.read("waiting")),
  ]);
});
