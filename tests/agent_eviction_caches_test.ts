/**
 * What an evicted agent leaves behind: its session's cached approval state, persona, allow-list policy, latest
 * compaction, title and derived history are dropped when it is evicted (all on `sessions/released`) (its log keeps them, and the next use reads them
 * again), so a process that touches many agents over time caches only the resident ones — the derived history
 * above all, which grows with the session — and a rehydrated agent still sees what its log holds.
 */
import assert from "node:assert/strict";
import {
  ApprovalsKey,
  type ApprovalsService,
  PromptAssembler,
  PromptKey,
  Titler,
  TitlesKey,
  ToolAllowList,
  ToolPolicyKey,
} from "@terret/core";
import { CompactionKey, CompactionService } from "@terret/core/compaction";
import { SessionLog } from "@terret/core/sessions";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";

async function stackWithCaches() {
  const stack = await createAgentStack({
    adapter: scriptedAdapter(Array.from({ length: 40 }, (_, i) => textReply(`Answer ${i}.`))),
    allow: ["*"],
    approvals: {},
    maxAgents: 2,
    rows: [
      { id: "compaction", plugin: CompactionService, config: { auto: false } },
      { id: "titles", plugin: Titler, config: { auto: false } },
    ],
  });
  const approvals = stack.ctx.get(ApprovalsKey) as unknown as ApprovalsService;
  const prompt = stack.ctx.get(PromptKey);
  const allow = stack.ctx.get(ToolPolicyKey);
  const compaction = stack.ctx.get(CompactionKey);
  const titles = stack.ctx.get(TitlesKey);
  const sessions = stack.sessions;
  assert.ok(prompt instanceof PromptAssembler && allow instanceof ToolAllowList);
  assert.ok(titles instanceof Titler);
  assert.ok(compaction instanceof CompactionService && sessions instanceof SessionLog);
  const cached = (): number[] => [
    approvals.cachedSessions,
    prompt.cachedSessions,
    allow.cachedSessions,
    compaction.cachedSessions,
    titles.cachedSessions,
    sessions.cachedHistories,
  ];
  /** Makes `id` resident, runs a turn on it and reads its session through every cache. */
  const touch = async (id: string): Promise<string> => {
    const agent = await stack.agents.ensure(id);
    agent.send("Go on");
    await agent.idle();
    await approvals.state(agent.session_id);
    await prompt.persona(agent.session_id);
    await allow.sessionPolicy(agent.session_id);
    await compaction.compact(agent.session_id); // reads its latest compaction first (a later turn compacts)
    await titles.current(agent.session_id);
    await sessions.deriveMessages(agent.session_id);
    return agent.session_id;
  };
  return { stack, cached, touch };
}

Deno.test("evicting an agent drops its session from the approvals, persona, allow-list, compaction, title and history caches", async () => {
  const { stack, cached, touch } = await stackWithCaches();
  await using _ = stack;
  for (let i = 0; i < 20; i++) await touch(`a-${i}`);
  // max_agents 2: eighteen agents were evicted to make room, and only the two resident ones stay cached.
  assert.deepStrictEqual(cached(), [2, 2, 2, 2, 2, 2]);
  await stack.agents.disposeAgent("a-19");
  assert.deepStrictEqual(cached(), [1, 1, 1, 1, 1, 1]);
});

Deno.test("a rehydrated agent reads its persona, policy and history from the log again", async () => {
  const { stack, cached, touch } = await stackWithCaches();
  await using _ = stack;
  const session = await touch("kept");
  await stack.sessions.append(session, {
    type: "persona/amended",
    payload: { text: "Answer in French." },
  });
  await stack.sessions.append(session, { type: "policy/updated", payload: { allow: ["Read"] } });
  const history = await stack.sessions.deriveMessages(session);
  await stack.agents.disposeAgent("kept");
  assert.deepStrictEqual(cached(), [0, 0, 0, 0, 0, 0]);
  // The history is read from the log again, whole: the same messages as before the eviction.
  assert.deepStrictEqual(await stack.sessions.deriveMessages(session), history);
  await touch("kept");
  assert.deepStrictEqual(cached(), [1, 1, 1, 1, 1, 1]);
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
