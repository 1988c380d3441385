/**
 * What an evicted agent leaves behind: its session's cached approval state, persona and allow-list policy are
 * dropped when it is evicted (its log keeps them, and the next use reads them again), so a process that touches
 * many agents over time caches only the resident ones, and a rehydrated agent still sees what its log holds.
 */
import assert from "node:assert/strict";
import {
  ApprovalsKey,
  type ApprovalsService,
  PromptAssembler,
  PromptKey,
  ToolAllowList,
  ToolPolicyKey,
} from "@terret/core";
import { createAgentStack } from "@terret/core/testing";

async function stackWithCaches() {
  const stack = await createAgentStack({ allow: ["*"], approvals: {}, maxAgents: 2 });
  const approvals = stack.ctx.get(ApprovalsKey) as unknown as ApprovalsService;
  const prompt = stack.ctx.get(PromptKey);
  const allow = stack.ctx.get(ToolPolicyKey);
  assert.ok(prompt instanceof PromptAssembler && allow instanceof ToolAllowList);
  const cached = (): number[] => [
    approvals.cachedSessions,
    prompt.cachedSessions,
    allow.cachedSessions,
  ];
  /** Makes `id` resident and reads its session through every cache. */
  const touch = async (id: string): Promise<string> => {
    const agent = await stack.agents.ensure(id);
    await approvals.state(agent.session_id);
    await prompt.persona(agent.session_id);
    await allow.sessionPolicy(agent.session_id);
    return agent.session_id;
  };
  return { stack, cached, touch };
}

Deno.test("evicting an agent drops its session from the approvals, persona and allow-list caches", async () => {
  const { stack, cached, touch } = await stackWithCaches();
  await using _ = stack;
  for (let i = 0; i < 20; i++) await touch(`a-${i}`);
  // max_agents 2: eighteen agents were evicted to make room, and only the two resident ones stay cached.
  assert.deepStrictEqual(cached(), [2, 2, 2]);
  await stack.agents.disposeAgent("a-19");
  assert.deepStrictEqual(cached(), [1, 1, 1]);
});

Deno.test("a rehydrated agent reads its persona and policy from the log again", async () => {
  const { stack, cached, touch } = await stackWithCaches();
  await using _ = stack;
  const session = await touch("kept");
  await stack.sessions.append(session, {
    type: "persona/amended",
    payload: { text: "Answer in French." },
  });
  await stack.sessions.append(session, { type: "policy/updated", payload: { allow: ["Read"] } });
  await stack.agents.disposeAgent("kept");
  assert.deepStrictEqual(cached(), [0, 0, 0]);
  await touch("kept");
  assert.deepStrictEqual(cached(), [1, 1, 1]);
  const prompt = stack.ctx.get(PromptKey);
  assert.ok(prompt instanceof PromptAssembler);
  assert.deepStrictEqual((await prompt.persona(session))?.amendments, ["Answer in French."]);
  assert.deepStrictEqual(await stack.ctx.get(ToolPolicyKey).sessionPolicy(session), ["Read"]);
});

Deno.test("the approvals sweep at boot leaves no idle session cached", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-eviction-caches-" });
  try {
    {
      await using first = await createAgentStack({ sqlitePath: `${dir}/terret.db` });
      for (let i = 0; i < 5; i++) await first.sessions.create({ session_id: `idle-${i}` });
    }
    await using second = await createAgentStack({
      sqlitePath: `${dir}/terret.db`,
      approvals: {},
    });
    const approvals = second.ctx.get(ApprovalsKey) as unknown as ApprovalsService;
    assert.equal(approvals.cachedSessions, 0);
    assert.notEqual(await approvals.state("idle-3"), undefined);
    assert.equal(approvals.cachedSessions, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
