/**
 * Golden event-order tests of the default loop (plan §2.4, §11): each scenario drives a real agent stack (memory
 * store, sessions, tools and allow list, prompt, agents, loop) with the scripted adapter and asserts the exact
 * sequence of durable events against `tests/golden/loop/<scenario>.jsonl` (seq, type, payload; ids and times vary).
 * Regenerate after an intended change with `UPDATE_GOLDEN=1 deno test -A tests/loop_golden_test.ts`.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { AgentPreStep, AgentStatusChanged, AgentTurnStopping, type Message } from "@terret/core";
import type { AgentStatusChangedPayload } from "@terret/core/agents";
import { ToolsExecute, ToolsPostExecute, ToolsPreExecute } from "@terret/core/tools";
import {
  type AgentStack,
  createAgentStack,
  errorReply,
  eventShapes,
  type JournalEntry,
  type ScriptedAdapter,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { assertGolden } from "./fixtures/golden.ts";

async function golden(stack: AgentStack, sessionId: string, name: string): Promise<void> {
  await assertGolden(`loop/${name}`, eventShapes(await stack.sessions.read(sessionId)));
}

function statuses(stack: AgentStack): string[] {
  const seen: string[] = [];
  stack.ctx.on(AgentStatusChanged, (payload: AgentStatusChangedPayload) => {
    seen.push(`${payload.agent_id}:${payload.status}`);
  });
  return seen;
}

function toolNames(adapter: ScriptedAdapter): string[][] {
  return adapter.requests.map((request) => (request.tools ?? []).map((tool) => tool.name));
}

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });

Deno.test("golden: a plain turn streams chunks, logs the message and closes the turn", async () => {
  const adapter = scriptedAdapter([textReply(["Hel", "lo ", "there"])]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const seen = statuses(stack);
  const agent = await stack.agents.create({
    agent_id: "plain",
    meta: { persona: "You are terse." },
  });
  agent.send("Hi");
  await agent.idle();
  await golden(stack, "plain", "plain_turn");
  assert.deepStrictEqual(adapter.requests, [{ system: "You are terse.", messages: [user("Hi")] }]);
  assert.deepStrictEqual(seen, ["plain:running", "plain:idle"]);
  assert.equal(agent.status, "idle");
});

Deno.test("golden: a multi-step tool turn sends each request with exactly the derived history", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "lookup", args: { q: "weather" } }], { text: "Checking." }),
    toolCallsReply([{ id: "c2", name: "lookup", args: { q: "forecast" } }]),
    textReply("Sunny."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["lookup"] });
  stack.tools.register(stack.ctx, scriptedTool("lookup").definition);
  const agent = await stack.agents.ensure("multi");
  agent.send("Weather?");
  await agent.idle();
  await golden(stack, "multi", "multi_step_tool_turn");
  const events = await stack.sessions.read("multi");
  const starts = events.filter((event) => event.type === "step/start").map((event) => event.seq);
  assert.equal(adapter.requests.length, 3);
  for (const [i, request] of adapter.requests.entries()) {
    // The request saw the log up to the step's first assistant event.
    const answer = events.find((event) =>
      event.seq > starts[i]! && event.type.startsWith("assistant/")
    )!;
    const upto = answer.seq - 1;
    assert.deepStrictEqual(
      request.messages,
      await stack.sessions.deriveMessages("multi", { upto }),
    );
    assert.deepStrictEqual(request.tools?.map((tool) => tool.name), ["lookup"]);
  }
});

Deno.test("golden: two parallel tools run together, then a serial one; results in call order", async () => {
  const journal: JournalEntry[] = [];
  const alpha = scriptedTool("alpha", { concurrency: "parallel", held: true, journal });
  const beta = scriptedTool("beta", { concurrency: "parallel", held: true, journal });
  const gamma = scriptedTool("gamma", { concurrency: "serial", journal });
  const adapter = scriptedAdapter([
    toolCallsReply([
      { id: "p1", name: "alpha", args: { n: 1 } },
      { id: "p2", name: "beta", args: { n: 2 } },
      { id: "s1", name: "gamma", args: { n: 3 } },
    ]),
    textReply("Done."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["alpha", "beta", "gamma"] });
  for (const tool of [alpha, beta, gamma]) stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("barrier");
  agent.send("Go");
  await alpha.started(1);
  await beta.started(1);
  // Both parallel calls are running at once: neither has ended, and the serial one has not started.
  assert.deepStrictEqual(journal.map((entry) => `${entry.event} ${entry.call_id}`), [
    "start p1",
    "start p2",
  ]);
  beta.release("p2");
  alpha.release("p1");
  await agent.idle();
  assert.deepStrictEqual(journal.map((entry) => `${entry.event} ${entry.call_id}`), [
    "start p1",
    "start p2",
    "end p2",
    "end p1",
    "start s1",
    "end s1",
  ]);
  await golden(stack, "barrier", "parallel_then_serial");
});

Deno.test("golden: a tool the allow list does not name is never offered and is denied when called", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "rm -rf /" } }]),
    textReply("I cannot run that."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["echo"] });
  const bash = scriptedTool("Bash");
  stack.tools.register(stack.ctx, scriptedTool("echo").definition);
  stack.tools.register(stack.ctx, bash.definition);
  const agent = await stack.agents.ensure("denied");
  agent.send("Clean up");
  await agent.idle();
  assert.deepStrictEqual(toolNames(adapter), [["echo"], ["echo"]]);
  assert.equal(bash.calls.length, 0);
  await golden(stack, "denied", "denied_tool");
});

Deno.test("golden: a policy narrowed mid-session offers and allows only what remains", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "grep", args: { pattern: "a" } }]),
    textReply("Found."),
    toolCallsReply([{ id: "c2", name: "grep", args: { pattern: "b" } }]),
    textReply("Not allowed any more."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["echo", "grep"] });
  const grep = scriptedTool("grep");
  stack.tools.register(stack.ctx, scriptedTool("echo").definition);
  stack.tools.register(stack.ctx, grep.definition);
  const agent = await stack.agents.ensure("narrowed");
  agent.send("Search a");
  await agent.idle();
  await stack.sessions.append("narrowed", { type: "policy/updated", payload: { allow: ["echo"] } });
  agent.send("Search b");
  await agent.idle();
  assert.deepStrictEqual(toolNames(adapter), [
    ["echo", "grep"],
    ["echo", "grep"],
    ["echo"],
    ["echo"],
  ]);
  assert.equal(grep.calls.length, 1);
  await golden(stack, "narrowed", "narrowed_policy");
});

Deno.test("golden: a steer arriving mid-turn is logged at the next step boundary", async () => {
  const slow = scriptedTool("slow", { held: true });
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "slow", args: {} }]),
    textReply("In Celsius: 21."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["slow"] });
  stack.tools.register(stack.ctx, slow.definition);
  const agent = await stack.agents.ensure("steered");
  agent.send("Temperature?");
  await slow.started(1);
  agent.inject("Use metric units.");
  slow.release();
  await agent.idle();
  await golden(stack, "steered", "steer_mid_turn");
  assert.deepStrictEqual(adapter.requests[1]!.messages.at(-1), user("Use metric units."));
});

Deno.test("golden: steers wait for a waking message or a waking steer, in arrival order", async () => {
  const adapter = scriptedAdapter([textReply("Noted."), textReply("Hello.")]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const agent = await stack.agents.ensure("waiting");
  agent.inject("Context one.");
  assert.equal(agent.status, "idle");
  assert.equal(agent.queued, 1);
  agent.inject("Context two.", { wake: true });
  await agent.idle();
  agent.inject("Context three.");
  agent.send("Hi");
  await agent.idle();
  await golden(stack, "waiting", "steers_wait_for_wake");
});

Deno.test("golden: a cancel mid-stream closes the stream and ends the turn cancelled", async () => {
  const adapter = scriptedAdapter([[
    { type: "message_start" },
    { type: "text_delta", text: "Hel" },
    { type: "gate", gate: "mid" },
    { type: "text_delta", text: "lo" },
    { type: "message_stop", finishReason: "stop" },
  ]]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const seen = statuses(stack);
  const agent = await stack.agents.ensure("cancel-stream");
  agent.send("Say hello");
  await adapter.reached("mid");
  assert.equal(agent.cancel("the user pressed stop"), true);
  await agent.idle();
  assert.equal(agent.cancel("again"), false);
  assert.deepStrictEqual(seen, ["cancel-stream:running", "cancel-stream:idle"]);
  await golden(stack, "cancel-stream", "cancel_mid_stream");
});

Deno.test("golden: a cancel mid-tool signals the running call and logs a result for every call", async () => {
  const slow = scriptedTool("slow", { concurrency: "serial", held: true });
  const after = scriptedTool("after", { concurrency: "serial" });
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "slow", args: {} }, { id: "c2", name: "after", args: {} }]),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["slow", "after"] });
  stack.tools.register(stack.ctx, slow.definition);
  stack.tools.register(stack.ctx, after.definition);
  const agent = await stack.agents.ensure("cancel-tool");
  agent.send("Work");
  await slow.started(1);
  agent.cancel("deadline passed");
  await agent.idle();
  assert.equal(slow.calls[0]!.run.signal.aborted, true);
  assert.equal(after.calls.length, 0);
  await golden(stack, "cancel-tool", "cancel_mid_tool");
  // Queued input does not wake a cancelled agent until the next wake.
  assert.equal(agent.status, "idle");
});

Deno.test("a cancel between tool/call and the handler: the handler never runs and the log says it never started", async () => {
  const write = scriptedTool("write", { concurrency: "serial", mutating: true });
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "write", args: { path: "a.txt" } }]),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["write"] });
  stack.tools.register(stack.ctx, write.definition);
  // A pre_execute listener holds the call after its tool/call is durable; the cancel lands while it waits.
  const holding = Promise.withResolvers<void>();
  const gate = Promise.withResolvers<void>();
  stack.ctx.on(ToolsPreExecute, async (call, next) => {
    holding.resolve();
    await gate.promise;
    return next(call);
  });
  const executed: string[] = [];
  stack.ctx.on(ToolsExecute, (execution, next) => {
    executed.push(execution.id);
    return next(execution);
  });
  const ended = Promise.withResolvers<void>();
  stack.ctx.on(ToolsPostExecute, (completion, next) => {
    ended.resolve();
    return next(completion);
  });
  const agent = await stack.agents.ensure("cancel-before-handler");
  agent.send("Write it");
  await holding.promise;
  assert.deepStrictEqual(
    (await stack.sessions.read("cancel-before-handler")).map((event) => event.type).slice(-1),
    ["tool/call"],
  );
  agent.cancel("the user pressed stop");
  await agent.idle();
  gate.resolve();
  await ended.promise;
  assert.deepStrictEqual([executed, write.journal], [[], []]);
  const results = (await stack.sessions.read("cancel-before-handler"))
    .filter((event) => event.type === "tool/result" || event.type === "turn/end")
    .map((event) => [event.type, event.payload]);
  assert.deepStrictEqual(results, [
    ["tool/result", {
      id: "c1",
      name: "write",
      content: 'The call to "write" was cancelled before it started (the user pressed stop).',
      is_error: true,
    }],
    ["turn/end", {
      status: "cancelled",
      error: { code: "Cancelled", message: "the user pressed stop" },
    }],
  ]);
});

Deno.test("golden: a stream error ends the turn failed with the error recorded", async () => {
  const adapter = scriptedAdapter([
    errorReply(
      { kind: "http", status: 503, message: "Service unavailable: overloaded", retryable: true },
      [{ type: "message_start" }, { type: "text_delta", text: "Par" }],
    ),
  ]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const seen = statuses(stack);
  const agent = await stack.agents.ensure("broken");
  agent.send("Hi");
  await agent.idle();
  assert.equal(agent.status, "failed");
  assert.deepStrictEqual(seen, ["broken:running", "broken:failed"]);
  await golden(stack, "broken", "stream_error");
});

Deno.test("golden: MAX_STEPS ends a runaway turn failed", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "again", args: {} }]),
    toolCallsReply([{ id: "c2", name: "again", args: {} }]),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["again"], maxSteps: 2 });
  stack.tools.register(stack.ctx, scriptedTool("again").definition);
  const agent = await stack.agents.ensure("runaway");
  agent.send("Loop");
  await agent.idle();
  assert.equal(adapter.remaining, 0);
  assert.equal(adapter.requests.length, 2);
  await golden(stack, "runaway", "max_steps");
});

Deno.test("golden: invalid tool arguments become error results written for the model", async () => {
  const read = {
    name: "read",
    description: "Reads a file",
    parameters: z.object({ path: z.string() }),
    mutating: false,
    approval: "never" as const,
    concurrency: "parallel" as const,
    handler: ({ path }: { path: string }) => `contents of ${path}`,
  };
  const adapter = scriptedAdapter([
    toolCallsReply([
      { id: "c1", name: "read", args: "{not json" },
      { id: "c2", name: "read", args: { path: 42 } },
      { id: "c3", name: "read", args: { path: "a.txt" } },
    ]),
    textReply("Fixed."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["read"] });
  stack.tools.register(stack.ctx, read);
  const agent = await stack.agents.ensure("invalid");
  agent.send("Read it");
  await agent.idle();
  await golden(stack, "invalid", "invalid_tool_arguments");
});

Deno.test("golden: a rejecting agent/pre_step closes a durable turn that spent no step", async () => {
  const adapter = scriptedAdapter([]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const agent = await stack.agents.ensure("budget");
  stack.ctx.on(
    AgentPreStep,
    (payload) => Promise.resolve({ reject: `budget exceeded at step ${payload.step}` }),
  );
  agent.send("Expensive question");
  await agent.idle();
  assert.equal(adapter.requests.length, 0);
  assert.equal(agent.status, "idle");
  await golden(stack, "budget", "pre_step_rejected");
});

Deno.test("golden: agent/pre_step rewrites what is entered, and agent/turn_stopping can ask for one more step", async () => {
  const adapter = scriptedAdapter([textReply("First."), textReply("Second.")]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  const agent = await stack.agents.ensure("goal");
  let asked = 0;
  agent.ctx.on(AgentPreStep, (payload, next) =>
    next({
      ...payload,
      messages: payload.messages.map((item) =>
        item.kind === "message" ? { ...item, content: `${item.content} [redacted tail]` } : item
      ),
    }));
  agent.ctx.on(
    AgentTurnStopping,
    () => asked++ === 0 ? { continue: "The goal is not met yet: continue." } : undefined,
  );
  agent.send("Start");
  await agent.idle();
  await golden(stack, "goal", "pre_step_rewrite_and_continue");
  assert.deepStrictEqual(adapter.requests[1]!.messages, [
    user("Start [redacted tail]"),
    { role: "assistant", parts: [{ type: "text", text: "First." }] },
    user("The goal is not met yet: continue."),
  ]);
});

Deno.test("golden: with a scrubber registered, each text run is one chunk and a split secret never reaches the log", async () => {
  const adapter = scriptedAdapter([textReply(["The key is sk-te", "st-123 and", " done."])]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  stack.sessions.registerScrubber(
    stack.ctx,
    (text) => text.replaceAll(/sk-[a-z0-9-]+/g, "[REDACTED]"),
    { marker: "[REDACTED]" },
  );
  const agent = await stack.agents.ensure("secret");
  agent.send("What is the key?");
  await agent.idle();
  await golden(stack, "secret", "scrubbed_chunks");
  const log = JSON.stringify(await stack.sessions.read("secret"));
  assert.equal(log.includes("sk-"), false);
});

Deno.test("a stream error's message reaches the log scrubbed, never with the secret", async () => {
  const adapter = scriptedAdapter([
    errorReply({
      kind: "provider",
      message: "Invalid key sk-live-abc123 for this model",
      retryable: false,
    }),
  ]);
  await using stack = await createAgentStack({ adapter, allow: [] });
  stack.sessions.registerScrubber(
    stack.ctx,
    (text) => text.replaceAll(/sk-[a-z0-9-]+/g, "[REDACTED]"),
  );
  const agent = await stack.agents.ensure("leaky");
  agent.send("Hi");
  await agent.idle();
  const events = await stack.sessions.read("leaky");
  assert.deepStrictEqual(events.at(-1)!.payload, {
    status: "failed",
    error: {
      code: "StreamFailed",
      message: "Invalid key [REDACTED] for this model",
      kind: "provider",
      retryable: false,
    },
  });
});
