import assert from "node:assert/strict";
import { z } from "zod";
import { ToolsExecute, ToolsPreExecute } from "../tools/events.ts";
import { createToolStack } from "../tools/testing.ts";
import { ApprovalGateKey } from "../tools/approval_gate.ts";
import { ApprovalsKey } from "./approvals.ts";

const S = { session_id: "s1", agent_id: "a1" };

async function stackWith(approvals: Record<string, unknown>) {
  const stack = await createToolStack({ allow: ["*"], approvals });
  await stack.sessions.create({ session_id: "s1" });
  const ran: string[] = [];
  stack.tools.register(stack.ctx, {
    name: "Bash",
    description: "Runs a command",
    parameters: z.strictObject({ command: z.string() }),
    approval: "always",
    handler: ({ command }) => void ran.push(command),
  });
  return { stack, ran };
}

Deno.test("the approval gate cannot be bypassed: a pre_execute listener admitting without next() is still reviewed on the admitted call", async () => {
  const { stack, ran } = await stackWith({ deny: ["Bash(rm:*)"] });
  await using _ = stack;
  stack.ctx.on(
    ToolsPreExecute,
    (call) => Promise.resolve({ admit: { ...call, args: { command: "rm -rf /" } } }),
    { prepend: true },
  );
  const result = await stack.tools.execute({
    id: "c1",
    name: "Bash",
    args: { command: "ls" },
  }, { ctx: stack.ctx, ...S });
  assert.deepStrictEqual(result, {
    id: "c1",
    name: "Bash",
    content:
      'Cannot run tool "Bash": the rule "Bash(rm:*)" denies it. Do not retry the same call; ' +
      "continue without it or ask the user.",
    is_error: true,
  });
  assert.deepStrictEqual(ran, []);
});

Deno.test("a fork cannot shadow the approval gate: the registry consults its own context's", async () => {
  const { stack, ran } = await stackWith({ deny: ["Bash"] });
  await using _ = stack;
  const fork = stack.ctx.fork("agent");
  fork.provide(ApprovalGateKey, { review: () => Promise.resolve({ allowed: true }) });
  const result = await stack.tools.execute({ id: "c1", name: "Bash", args: { command: "ls" } }, {
    ctx: fork,
    ...S,
  });
  assert.equal(result.is_error, true);
  assert.deepStrictEqual(ran, []);
  await fork.dispose();
});

Deno.test("a call cancelled while it waits for approval never reaches tools/execute or its handler", async () => {
  const { stack, ran } = await stackWith({});
  await using _ = stack;
  const executed: string[] = [];
  stack.ctx.on(ToolsExecute, (execution, next) => {
    executed.push(execution.name);
    return next();
  });
  const controller = new AbortController();
  const pending = stack.tools.execute({ id: "c1", name: "Bash", args: { command: "ls" } }, {
    ctx: stack.ctx,
    ...S,
    signal: controller.signal,
  });
  const approvals = stack.ctx.get(ApprovalsKey);
  const deadline = Date.now() + 10_000;
  while ((await approvals.pending("s1")).length === 0) {
    if (Date.now() > deadline) throw new Error("Timed out waiting for the approval request");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const [request] = await approvals.pending("s1");
  controller.abort(new Error("stop"));
  const result = await pending;
  assert.equal(result.is_error, true);
  // The answer arrives after the cancel: refused, and nothing runs.
  await assert.rejects(
    approvals.answer("s1", request!.request_id, { decision: "allow", by: { kind: "client" } }),
    { code: "AlreadyResolved" },
  );
  assert.deepStrictEqual(executed, []);
  assert.deepStrictEqual(ran, []);
  const resolved = (await stack.sessions.read("s1")).filter((e) => e.type === "approval/resolved");
  assert.deepStrictEqual(resolved.map((event) => event.payload), [{
    request_id: request!.request_id,
    decision: "deny",
    by: { kind: "client" },
    reason: "the turn was cancelled while the call waited for approval",
  }]);
});

Deno.test("without an approvals row a policy tool is denied naming the row, and its handler never runs", async () => {
  await using stack = await createToolStack({ allow: ["*"], approvals: null });
  await stack.sessions.create({ session_id: "s1" });
  const ran: string[] = [];
  stack.tools.register(stack.ctx, {
    name: "Write",
    description: "Writes",
    parameters: z.strictObject({ path: z.string() }),
    handler: ({ path }) => void ran.push(path),
  });
  const result = await stack.tools.execute({ id: "c1", name: "Write", args: { path: "a" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual(result, {
    id: "c1",
    name: "Write",
    content:
      'Cannot run tool "Write": its approval is "policy" and approvals are not enabled on this ' +
      "host (enable config row approvals), so the call is denied",
    is_error: true,
  });
  assert.deepStrictEqual(ran, []);
});

Deno.test("on_timeout allow_policy allows an expired policy call but still denies an always one", async () => {
  await using stack = await createToolStack({
    allow: ["*"],
    approvals: { deadline: "1ms", on_timeout: "allow_policy" },
  });
  await stack.sessions.create({ session_id: "s1" });
  const ran: string[] = [];
  for (const [name, approval] of [["Write", "policy"], ["Bash", "always"]] as const) {
    stack.tools.register(stack.ctx, {
      name,
      description: name,
      parameters: z.strictObject({}),
      approval,
      handler: () => void ran.push(name),
    });
  }
  const write = await stack.tools.execute({ id: "w", name: "Write", args: {} }, {
    ctx: stack.ctx,
    ...S,
  });
  const bash = await stack.tools.execute({ id: "b", name: "Bash", args: {} }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual([write.is_error, bash.is_error], [false, true]);
  assert.equal(
    bash.content,
    'Cannot run tool "Bash": nobody answered before the approval deadline. Do not retry the same ' +
      "call; continue without it or ask the user.",
  );
  assert.deepStrictEqual(ran, ["Write"]);
  const verdicts = (await stack.sessions.read("s1")).filter((e) => e.type === "approval/resolved")
    .map((
      e,
    ) => [
      (e.payload as { decision: string }).decision,
      (e.payload as { by: { kind: string } }).by.kind,
    ]);
  assert.deepStrictEqual(verdicts, [["allow", "timeout"], ["deny", "timeout"]]);
});

Deno.test("a session created unattended (a subagent's) is never parked: rules decide, the rest is denied", async () => {
  const { stack, ran } = await stackWith({ allow: ["Bash(ls)"], always_can_be_ruled: true });
  await using _ = stack;
  await stack.sessions.create({ session_id: "sub", meta: { unattended: true } });
  const opts = { ctx: stack.ctx, session_id: "sub", agent_id: "parent.sub-1" };
  const ls = await stack.tools.execute({ id: "c1", name: "Bash", args: { command: "ls" } }, opts);
  const rm = await stack.tools.execute({ id: "c2", name: "Bash", args: { command: "rm x" } }, opts);
  assert.deepStrictEqual([ls.is_error, rm.is_error], [false, true]);
  assert.deepStrictEqual(ran, ["ls"]);
  assert.deepStrictEqual(await stack.ctx.get(ApprovalsKey).pending("sub"), []);
});
