/**
 * The agents service's take-over of orphaned agents (their lease expired unreleased: their node died), over an
 * in-memory lease provider that keeps the seam's contract (one holder at a time, a greater token per new holder,
 * expired-and-owned leases listed oldest first): one pass adopts every orphan, in batches, not only the first batch,
 * and stops at the first refusal when every resident agent is busy.
 */
import assert from "node:assert/strict";
import { createMemoryLogger } from "@terret/hames";
import { AgentRegistry } from "@terret/core/agents";
import {
  type AgentStack,
  createAgentStack,
  scriptedAdapter,
  textReply,
} from "@terret/core/testing";
import { until } from "../exec/process/_testing.ts";
import { MemoryLeases, storeWithLeases } from "./_memory_leases.ts";

/**
 * Creates each agent and disposes it again, then leaves its lease as a node that died would: held by that node and
 * expired, the oldest expiry first (in the order of `ids`).
 */
async function leaveOrphaned(
  stack: AgentStack,
  leases: MemoryLeases,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids) {
    await stack.agents.create({ agent_id: id });
    await stack.agents.disposeAgent(id);
  }
  ids.forEach((id, i) => leases.seed(id, "node-dead", leases.now - 1000 + i));
}

Deno.test("take-over: one pass adopts every orphaned agent in batches of 32, each once, and none is left orphaned", async () => {
  // A ttl of an hour: the periodic pass never runs during the test; the test runs one itself.
  const leases = new MemoryLeases("node-b", 3_600_000);
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([]),
    store: { plugin: storeWithLeases(leases) },
  });
  const ids = Array.from({ length: 70 }, (_, i) => `orphan-${String(i).padStart(2, "0")}`);
  await leaveOrphaned(stack, leases, ids);
  assert.equal((await leases.orphaned(1000)).length, 70);

  assert.ok(stack.agents instanceof AgentRegistry);
  const adopted = await stack.agents.takeOver();

  assert.deepStrictEqual(adopted, ids);
  // Batches of 32: the first asked for 32; each next one for those tried so far plus 32 (an adopted agent acquires
  // its lease in its own pump, so the list may still name it).
  assert.equal(leases.listed[1], 32);
  assert.ok(leases.listed.length >= 3, `${leases.listed}`);
  await until(
    "every adopted agent took its lease and released it on going idle",
    async () => (await leases.orphaned(1000)).length === 0,
  );
  // Each was granted once, to this node (token 2 after the dead node's 1), which holds it or has released it.
  for (const id of ids) {
    const row = leases.rows.get(id)!;
    assert.equal(row.token, 2, id);
    assert.notEqual(row.owner, "node-dead", id);
  }
});

Deno.test("take-over: at the cap with every resident agent busy, a pass stops at the first refusal and the next pass adopts the rest", async () => {
  const leases = new MemoryLeases("node-b", 3_600_000);
  // Two turns held at a gate keep both resident agents busy.
  const adapter = scriptedAdapter([
    [{ type: "message_start" }, { type: "gate", gate: "hold" }, ...textReply("One.").slice(1)],
    [{ type: "message_start" }, { type: "gate", gate: "hold" }, ...textReply("Two.").slice(1)],
  ]);
  const logger = createMemoryLogger();
  await using stack = await createAgentStack({
    adapter,
    store: { plugin: storeWithLeases(leases) },
    maxAgents: 2,
    context: { mode: "test", logger },
  });
  const ids = ["orphan-0", "orphan-1", "orphan-2", "orphan-3", "orphan-4"];
  await leaveOrphaned(stack, leases, ids);
  const busy = [await stack.agents.ensure("busy-a"), await stack.agents.ensure("busy-b")];
  for (const agent of busy) agent.send("Work");
  await until("both turns hold at the gate", () => adapter.remaining === 0);
  await adapter.reached("hold");
  assert.equal(stack.agents.busyCount, 2);

  assert.ok(stack.agents instanceof AgentRegistry);
  // The first orphan is refused (AgentsBusy: nothing to evict), and the pass goes no further: one list, one try.
  assert.deepStrictEqual(await stack.agents.takeOver(), ["orphan-0"]);
  assert.deepStrictEqual(leases.listed, [32]);
  assert.deepStrictEqual(await leases.orphaned(1000), ids);
  assert.deepStrictEqual(stack.agents.list().map((agent) => agent.id).sort(), ["busy-a", "busy-b"]);
  const refused = logger.records.filter((record) => record.fields.agent_id === "orphan-0");
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.level, "warn");
  assert.match(
    String((refused[0]!.fields.error as Error).message),
    /all 2 resident agents are busy/,
  );

  adapter.open("hold");
  for (const agent of busy) await agent.idle();
  // With idle agents to evict, the next pass adopts every orphan, the refused one included.
  assert.deepStrictEqual(await stack.agents.takeOver(), ids);
  await until(
    "every adopted agent took its lease",
    async () => (await leases.orphaned(1000)).length === 0,
  );
  for (const id of ids) assert.equal(leases.rows.get(id)!.token, 2, id);
});
