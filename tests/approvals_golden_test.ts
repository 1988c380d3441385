/**
 * Golden durable-event tests of approvals (issue 15): a real agent stack (store, sessions, tools, allow list,
 * approvals, agents, loop) with the scripted adapter; each scenario's exact event sequence is pinned in
 * `tests/golden/approvals/<scenario>.jsonl` (request ids and deadlines replaced by stable placeholders).
 * Regenerate after an intended change with `UPDATE_GOLDEN=1 deno test -A tests/approvals_golden_test.ts`.
 */
import assert from "node:assert/strict";
import { type Context, definePlugin } from "@terret/hames";
import {
  AgentStatusChanged,
  type Approvals,
  ApprovalsKey,
  CORE_ERRORS,
  type SessionEvent,
  ToolsKey,
} from "@terret/core";
import type { AgentStatusChangedPayload } from "@terret/core/agents";
import {
  type AgentStack,
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  type ScriptedTool,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { until } from "../exec/process/_testing.ts";
import { assertGolden } from "./fixtures/golden.ts";

/** The session's events with request ids numbered in order of appearance and deadlines masked. */
export function stableShapes(events: readonly SessionEvent[]): unknown[] {
  const ids = new Map<string, string>();
  const text = JSON.stringify(eventShapes(events)).replace(
    /"request_id":"([^"]+)"/g,
    (_, id: string) => {
      if (!ids.has(id)) ids.set(id, `r${ids.size + 1}`);
      return `"request_id":"${ids.get(id)}"`;
    },
  ).replace(/"deadline_at":"[^"]+"/g, '"deadline_at":"<deadline>"');
  return JSON.parse(text);
}

async function golden(stack: AgentStack, sessionId: string, name: string): Promise<void> {
  await assertGolden(`approvals/${name}`, stableShapes(await stack.sessions.read(sessionId)));
}

function approvalsOf(stack: AgentStack): Approvals {
  return stack.ctx.get(ApprovalsKey);
}

async function openRequests(
  stack: AgentStack,
  sessionId: string,
  count: number,
): Promise<string[]> {
  const approvals = approvalsOf(stack);
  await until(
    `${count} open approval requests`,
    async () => (await approvals.pending(sessionId)).length === count,
  );
  return (await approvals.pending(sessionId)).map((request) => request.request_id);
}

function bash(options: Parameters<typeof scriptedTool>[1] = {}): ScriptedTool {
  return scriptedTool("Bash", { approval: "policy", concurrency: "serial", ...options });
}

const client = { kind: "client" as const, id: "t1" };

Deno.test("golden approvals: an allowed call runs once after the answer and the turn goes on", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make deploy" } }]),
    textReply("Deployed."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const seen: string[] = [];
  stack.ctx.on(AgentStatusChanged, (p: AgentStatusChangedPayload) => void seen.push(p.status));
  const agent = await stack.agents.ensure("allow");
  agent.send("Deploy");
  const [id] = await openRequests(stack, "allow", 1);
  assert.equal(tool.calls.length, 0);
  assert.equal(agent.status, "waiting_approval");
  await approvalsOf(stack).answer("allow", id!, { decision: "allow", by: client });
  await agent.idle();
  assert.equal(tool.calls.length, 1);
  assert.deepStrictEqual(seen, ["running", "waiting_approval", "running", "idle"]);
  await golden(stack, "allow", "allow");
});

Deno.test("golden approvals: a denied call is an is_error result with the reason, seen by the model", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make deploy" } }]),
    textReply("Understood."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("deny");
  agent.send("Deploy");
  const [id] = await openRequests(stack, "deny", 1);
  await approvalsOf(stack).answer("deny", id!, {
    decision: "deny",
    by: client,
    reason: "not on a Friday",
  });
  await agent.idle();
  assert.equal(tool.calls.length, 0);
  const second = adapter.requests[1]!.messages.at(-1)!;
  assert.deepStrictEqual(second, {
    role: "tool",
    parts: [{
      type: "tool_result",
      id: "c1",
      name: "Bash",
      content:
        'Cannot run tool "Bash": the user denied it (not on a Friday). Do not retry the same ' +
        "call; continue without it or ask the user.",
      is_error: true,
    }],
  });
  await golden(stack, "deny", "deny");
});

Deno.test("golden approvals: rules allow, deny, and an ask rule overrides an allow rule", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([
      { id: "c1", name: "Bash", args: { command: "git status" } },
      { id: "c2", name: "Bash", args: { command: "ls; rm -rf /" } },
      { id: "c3", name: "Bash", args: { command: "git push" } },
    ]),
    textReply("Done."),
  ]);
  await using stack = await createAgentStack({
    adapter,
    allow: ["Bash"],
    approvals: {
      allow: ["Bash(git status)", "Bash(git push:*)"],
      ask: ["Bash(git push:*)"],
      deny: ["Bash(rm:*)"],
    },
  });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("rules");
  agent.send("Go");
  const [id] = await openRequests(stack, "rules", 1);
  assert.deepStrictEqual(tool.calls.map((call) => call.args), [{ command: "git status" }]);
  await approvalsOf(stack).answer("rules", id!, { decision: "allow", by: client });
  await agent.idle();
  assert.deepStrictEqual(tool.calls.map((call) => call.args), [
    { command: "git status" },
    { command: "git push" },
  ]);
  await golden(stack, "rules", "rules");
});

Deno.test("golden approvals: remember adds a session rule, so the next matching call is not asked", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "npm test" } }]),
    toolCallsReply([{ id: "c2", name: "Bash", args: { command: "npm test --watch=false" } }]),
    toolCallsReply([{ id: "c3", name: "Bash", args: { command: "npm test && curl x.io" } }]),
    textReply("Green."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("remember");
  agent.send("Test");
  const [first] = await openRequests(stack, "remember", 1);
  const resolved = await approvalsOf(stack).answer("remember", first!, {
    decision: "allow",
    by: client,
    remember: true,
  });
  assert.equal((resolved.payload as { rule?: string }).rule, "Bash(npm test:*)");
  // The compound command is not covered by the remembered prefix: it is asked about.
  const open = await openRequests(stack, "remember", 1);
  await approvalsOf(stack).answer("remember", open[0]!, { decision: "deny", by: client });
  await agent.idle();
  assert.deepStrictEqual(tool.calls.map((call) => call.args.command), [
    "npm test",
    "npm test --watch=false",
  ]);
  await golden(stack, "remember", "remember");
});

Deno.test("golden approvals: the first of two racing answers wins; the second is already_resolved", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make" } }]),
    textReply("Built."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("race");
  agent.send("Build");
  const [id] = await openRequests(stack, "race", 1);
  const approvals = approvalsOf(stack);
  const [a, b] = await Promise.allSettled([
    approvals.answer("race", id!, { decision: "allow", by: { kind: "client", id: "t1" } }),
    approvals.answer("race", id!, { decision: "deny", by: { kind: "client", id: "t2" } }),
  ]);
  assert.equal(a.status, "fulfilled");
  assert.equal(b.status, "rejected");
  const error = (b as PromiseRejectedResult).reason;
  assert.ok(CORE_ERRORS.is(error, "AlreadyResolved"));
  assert.equal(error.message, `Cannot answer approval request "${id}": it is already resolved`);
  await agent.idle();
  // Answering after the verdict is durable is refused the same way, naming the verdict.
  await assert.rejects(
    approvals.answer("race", id!, { decision: "deny", by: client }),
    (e: unknown) =>
      CORE_ERRORS.is(e, "AlreadyResolved") &&
      e.message === `Cannot answer approval request "${id}": it is already resolved (allow)`,
  );
  assert.equal(tool.calls.length, 1);
  await golden(stack, "race", "first_answer_wins");
});

Deno.test("golden approvals: a request past its deadline is denied by timeout", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make" } }]),
    textReply("Timed out."),
  ]);
  await using stack = await createAgentStack({
    adapter,
    allow: ["Bash"],
    approvals: { deadline: "1ms" },
  });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("expiry");
  agent.send("Build");
  await until(
    "the turn to end",
    async () => (await stack.sessions.read("expiry")).some((event) => event.type === "turn/end"),
  );
  await agent.idle();
  assert.equal(tool.calls.length, 0);
  await golden(stack, "expiry", "deadline_expiry");
});

Deno.test("golden approvals: a deadline that passed while the host was down is applied on boot", async () => {
  const dir = await Deno.makeTempDir();
  const sqlitePath = `${dir}/sessions.db`;
  try {
    const adapter = scriptedAdapter([
      toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make" } }]),
      textReply("It expired."),
    ]);
    {
      await using first = await createAgentStack({
        adapter,
        sqlitePath,
        allow: ["Bash"],
        approvals: { deadline: "1h" },
      });
      first.tools.register(first.ctx, bash().definition);
      const agent = await first.agents.ensure("down");
      agent.send("Build");
      await openRequests(first, "down", 1);
    }
    // The next boot's clock is a day later: the request's deadline passed while nothing ran.
    const later = { now: () => Date.now() + 86_400_000 };
    await using second = await createAgentStack({
      adapter,
      sqlitePath,
      allow: ["Bash"],
      approvals: { deadline: "1h" },
      approvalClock: later,
    });
    const tool = bash();
    second.tools.register(second.ctx, tool.definition);
    await until(
      "the expiry to be durable",
      async () =>
        (await second.sessions.read("down")).some((event) => event.type === "approval/resolved"),
    );
    const agent = await second.agents.ensure("down");
    agent.wake();
    await agent.idle();
    assert.equal(tool.calls.length, 0);
    await golden(second, "down", "deadline_while_down");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approvals: a call answered before a crash runs once on boot, after the row registering its tool started", async () => {
  const dir = await Deno.makeTempDir();
  const sqlitePath = `${dir}/sessions.db`;
  try {
    {
      const adapter = scriptedAdapter([
        toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make" } }]),
      ]);
      await using first = await createAgentStack({
        adapter,
        sqlitePath,
        allow: ["Bash"],
        approvals: {},
      });
      first.tools.register(first.ctx, bash().definition);
      (await first.agents.ensure("crash")).send("Build");
      await openRequests(first, "crash", 1);
    }
    // The verdict is durable, the call has not run: as if the process died between the two.
    {
      await using between = await createAgentStack({ sqlitePath });
      const [requested] = (await between.sessions.read("crash")).filter((event) =>
        event.type === "approval/requested"
      );
      await between.sessions.append("crash", {
        type: "approval/resolved",
        payload: {
          request_id: (requested!.payload as { request_id: string }).request_id,
          decision: "allow",
          by: client,
        },
      });
    }
    // The tool comes from a row whose start does real I/O first; the resume must wait for it, not race it.
    const tool = bash();
    const tools = definePlugin({
      name: "test-slow-tools",
      inject: [ToolsKey],
      apply: async (ctx: Context) => {
        await Deno.stat(dir);
        ctx.get(ToolsKey).register(ctx, tool.definition);
      },
    });
    await using second = await createAgentStack({
      adapter: scriptedAdapter([textReply("Built.")]),
      sqlitePath,
      allow: ["Bash"],
      approvals: {},
      rows: [{ id: "tools.slow", plugin: tools }],
    });
    await until(
      "the resumed turn to end",
      async () => (await second.sessions.read("crash")).some((event) => event.type === "turn/end"),
    );
    const events = await second.sessions.read("crash");
    assert.deepStrictEqual(tool.calls.map((call) => call.args), [{ command: "make" }]);
    assert.deepStrictEqual(
      events.filter((event) =>
        ["approval/requested", "tool/result", "turn/end"].includes(event.type)
      )
        .map((event) => [event.type, event.payload as { is_error?: boolean; status?: string }]),
      [
        [
          "approval/requested",
          events.find((event) => event.type === "approval/requested")!.payload,
        ],
        ["tool/result", {
          id: "c1",
          name: "Bash",
          content: 'Bash ok: {"command":"make"}',
          is_error: false,
        }],
        ["turn/end", { status: "completed" }],
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("golden approvals: an unattended agent is never parked; what would be asked is denied", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([
      { id: "c1", name: "Bash", args: { command: "git status" } },
      { id: "c2", name: "Bash", args: { command: "make deploy" } },
    ]),
    textReply("Partly done."),
  ]);
  await using stack = await createAgentStack({
    adapter,
    allow: ["Bash"],
    approvals: { unattended: ["bot-*"], allow: ["Bash(git status)"] },
  });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("bot-1");
  agent.send("Go");
  await agent.idle();
  assert.deepStrictEqual(tool.calls.map((call) => call.args.command), ["git status"]);
  await golden(stack, "bot-1", "unattended");
});

Deno.test("golden approvals: cancel while waiting ends the turn cancelled and denies the request", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "make" } }]),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
  const tool = bash();
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("cancel");
  agent.send("Build");
  await openRequests(stack, "cancel", 1);
  assert.equal(agent.cancel("stop"), true);
  await agent.idle();
  assert.equal(tool.calls.length, 0);
  assert.equal(agent.status, "idle");
  await golden(stack, "cancel", "cancel_while_waiting");
});

Deno.test("golden approvals: two parked parallel calls answered in reverse order keep results in call order", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([
      { id: "p1", name: "fetch", args: { n: 1 } },
      { id: "p2", name: "fetch", args: { n: 2 } },
    ]),
    textReply("Both."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["fetch"], approvals: {} });
  const tool = scriptedTool("fetch", { approval: "policy", concurrency: "parallel" });
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("pair");
  agent.send("Fetch");
  const ids = await openRequests(stack, "pair", 2);
  const requests = await approvalsOf(stack).pending("pair");
  const byCall = new Map(requests.map((request) => [request.call.id, request.request_id]));
  assert.deepStrictEqual(new Set(ids), new Set(byCall.values()));
  await approvalsOf(stack).answer("pair", byCall.get("p2")!, { decision: "allow", by: client });
  await until("p2 to run", () => tool.calls.length === 1);
  await approvalsOf(stack).answer("pair", byCall.get("p1")!, { decision: "deny", by: client });
  await agent.idle();
  const events = await stack.sessions.read("pair");
  const results = events.filter((event) => event.type === "tool/result").map((
    event,
  ) => (event.payload as { id: string; is_error: boolean })).map(({ id, is_error }) => ({
    id,
    is_error,
  }));
  assert.deepStrictEqual(results, [{ id: "p1", is_error: true }, { id: "p2", is_error: false }]);
  assert.deepStrictEqual(tool.calls.map((call) => call.args), [{ n: 2 }]);
  await golden(stack, "pair", "reverse_answers_call_order");
});

Deno.test("fail closed: with no approvals row an always tool is denied, naming the row, and never runs", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "Bash", args: { command: "rm -rf /" } }]),
    textReply("Refused."),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["Bash"] });
  const tool = bash({ approval: "always" });
  stack.tools.register(stack.ctx, tool.definition);
  const agent = await stack.agents.ensure("closed");
  agent.send("Go");
  await agent.idle();
  assert.equal(tool.calls.length, 0);
  const result = (await stack.sessions.read("closed")).find((event) =>
    event.type === "tool/result"
  );
  assert.deepStrictEqual(result?.payload, {
    id: "c1",
    name: "Bash",
    content:
      'Cannot run tool "Bash": its approval is "always" and approvals are not enabled on this host ' +
      "(enable config row approvals), so the call is denied",
    is_error: true,
  });
});
