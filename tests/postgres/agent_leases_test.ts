/**
 * Agents under leases on one PostgreSQL store, two agent stacks (two nodes) in one process: a turn runs only on the
 * node holding the agent's lease, every append of it is fenced, and a node whose lease another node took (its
 * renewals paused past the ttl: split brain) has its next append refused and stops the agent at once. A message
 * arriving at a node that does not hold the lease is made durable and claimed by the holder, or by the next acquirer.
 */
import assert from "node:assert/strict";
import { type Context, definePlugin } from "@terret/hames";
import { AgentDisposed, type AgentDisposedPayload, AgentLeasesKey } from "@terret/core/agents";
import { type SessionEvent, SessionStoreKey } from "@terret/core";
import { PostgresAgentLeases, PostgresSessionStore } from "@terret/core/postgres";
import {
  type AgentStack,
  createAgentStack,
  type ScriptedAdapter,
  scriptedAdapter,
  type ScriptItem,
  textReply,
} from "@terret/core/testing";
import { postgresLane } from "./cluster.ts";
import { until as waitUntil } from "../../exec/process/_testing.ts";

const lane = await postgresLane();
const TTL_MS = 600;

/** The PostgreSQL store row with a seam on renewals: `paused.value = true` makes every renewal wait. */
function storeRow(url: string, node: string, paused: { value: boolean } = { value: false }) {
  return definePlugin({
    name: "terret-store-postgres",
    description: "The PostgreSQL store, with renewals that can be paused",
    provides: [SessionStoreKey, AgentLeasesKey],
    async apply(ctx: Context): Promise<void> {
      const store = await PostgresSessionStore.open({ url, node, logger: ctx.logger });
      ctx.effect(() => () => store.close(), "close postgres store");
      ctx.provide(SessionStoreKey, store);
      const leases = new PostgresAgentLeases(store, TTL_MS);
      const renew = leases.renew.bind(leases);
      leases.renew = (lease) => paused.value ? new Promise(() => {}) : renew(lease);
      ctx.provide(AgentLeasesKey, leases);
    },
  });
}

async function node(
  url: string,
  name: string,
  adapter: ScriptedAdapter,
  paused?: { value: boolean },
): Promise<AgentStack> {
  return await createAgentStack({ adapter, store: { plugin: storeRow(url, name, paused) } });
}

/** The shared polling wait, with this file's deadline (a deadline, not a timing claim). */
function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  return waitUntil(what, check, 20_000);
}

const texts = (events: readonly SessionEvent[]): string[] =>
  events.filter((event) => event.type === "assistant/message").map((event) =>
    JSON.stringify((event.payload as { parts: unknown }).parts)
  );
const count = (events: readonly SessionEvent[], type: string): number =>
  events.filter((event) => event.type === type).length;
const gated = (text: string): ScriptItem[] => [{ type: "gate", gate: "hold" }, ...textReply(text)];

Deno.test({
  name: "split brain: a node whose lease was taken has its next append refused and stops the agent",
  ignore: lane.skip !== undefined,
  async fn() {
    const url = await lane.cluster!.createDatabase("leases_split");
    const paused = { value: false };
    const modelA = scriptedAdapter([gated("from A")]);
    await using a = await node(url, "node-a", modelA, paused);
    const modelB = scriptedAdapter([textReply("B resumed"), textReply("B answered")]);
    await using b = await node(url, "node-b", modelB);
    const disposedA: AgentDisposedPayload[] = [];
    a.ctx.on(AgentDisposed, (payload) => void disposedA.push(payload));

    const agentA = await a.agents.ensure("a1");
    agentA.send("first");
    await modelA.reached("hold");
    assert.equal((agentA as unknown as { leaseToken: number }).leaseToken, 1);
    paused.value = true; // node A stalls: its lease runs out while its turn waits on the model

    const agentB = await b.agents.ensure("a1");
    const queued = await agentB.enqueue({ kind: "message", content: "second" });
    // B takes the lease once A's expired and resumes A's open turn from the log, claiming the queued message in it.
    await until("node B to finish both turns", async () => {
      const events = await b.sessions.read("a1");
      return count(events, "turn/end") === 1 && agentB.status === "idle";
    });
    const before = await b.sessions.read("a1");
    assert.equal(modelB.requests.length, 2);

    modelA.open("hold"); // A wakes up and streams its answer: refused, and A stops the agent
    await until("node A to dispose the agent", () => disposedA.length === 1);
    assert.deepStrictEqual(disposedA, [{ agent_id: "a1", session_id: "a1", reason: "lease_lost" }]);
    assert.equal(a.agents.get("a1"), undefined);

    const after = await b.sessions.read("a1");
    assert.deepStrictEqual(
      after,
      before,
      "nothing of node A reached the log after node B took the lease",
    );
    assert.deepStrictEqual(after.map((event) => event.seq), after.map((_, i) => i + 1));
    assert.deepStrictEqual(texts(after), [
      JSON.stringify([{ type: "text", text: "B resumed" }]),
      JSON.stringify([{ type: "text", text: "B answered" }]),
    ]);
    const claims = after.filter((event) => event.type === "user/message");
    assert.deepStrictEqual(
      claims.map((event) => (event.payload as { queued_seq?: number }).queued_seq),
      [
        undefined,
        queued,
      ],
    );
  },
});

Deno.test({
  name:
    "a message at a node without the lease is durable, claimed once by the holder, then by the next acquirer",
  ignore: lane.skip !== undefined,
  async fn() {
    const url = await lane.cluster!.createDatabase("leases_handoff");
    const modelA = scriptedAdapter([gated("A first"), textReply("A took B's message")]);
    await using a = await node(url, "node-a", modelA);
    const modelB = scriptedAdapter([textReply("B answered")]);
    await using b = await node(url, "node-b", modelB);

    const agentA = await a.agents.ensure("a2");
    agentA.send("first");
    await modelA.reached("hold");
    const agentB = await b.agents.ensure("a2");
    const queued = await agentB.enqueue({ kind: "message", content: "via B" });
    assert.equal(agentB.status, "idle", "node B runs nothing while node A holds the lease");
    // Node A, still in its turn, reads the durable input at its next renewal.
    await until("node A to queue node B's message while its turn runs", () => agentA.queued === 1);

    modelA.open("hold");
    // Its turn's next step claims it; node B, trying again, finds it claimed and drops it.
    await until("node A to answer node B's message and node B to drop it", async () => {
      const events = await a.sessions.read("a2");
      return count(events, "turn/end") === 1 && agentA.status === "idle" && agentB.queued === 0;
    });
    let events = await a.sessions.read("a2");
    const claims = events.filter((event) => event.type === "user/message");
    assert.deepStrictEqual(
      claims.map((event) => (event.payload as { queued_seq?: number }).queued_seq),
      [
        undefined,
        queued,
      ],
    );
    assert.equal(modelB.requests.length, 0, "the message was run once, by the holder");

    // The lease is free now (A is idle): the next message at B is claimed by B, the next acquirer.
    agentB.send("at B");
    await agentB.idle();
    await until("node B's turn", async () => count(await b.sessions.read("a2"), "turn/end") === 2);
    events = await b.sessions.read("a2");
    assert.deepStrictEqual(texts(events), [
      JSON.stringify([{ type: "text", text: "A first" }]),
      JSON.stringify([{ type: "text", text: "A took B's message" }]),
      JSON.stringify([{ type: "text", text: "B answered" }]),
    ]);
    assert.deepStrictEqual(events.map((event) => event.seq), events.map((_, i) => i + 1));
  },
});

Deno.test({
  name:
    "failover: with no stimulus, a surviving node takes over an agent whose holder stopped renewing",
  ignore: lane.skip !== undefined,
  async fn() {
    const url = await lane.cluster!.createDatabase("leases_failover");
    const paused = { value: false };
    const modelA = scriptedAdapter([gated("from A")]);
    await using a = await node(url, "node-a", modelA, paused);
    const modelB = scriptedAdapter([textReply("B finished it")]);
    await using b = await node(url, "node-b", modelB);

    const agentA = await a.agents.ensure("a3");
    agentA.send("first");
    await modelA.reached("hold");
    paused.value = true; // node A is as good as dead: its lease expires unreleased
    assert.equal(b.agents.get("a3"), undefined, "node B has never heard of the agent");

    await until("node B to take the agent over and finish its turn", async () => {
      const events = await b.sessions.read("a3");
      return count(events, "turn/end") === 1 && b.agents.get("a3")?.status === "idle";
    });
    const events = await b.sessions.read("a3");
    assert.deepStrictEqual(texts(events), [
      JSON.stringify([{ type: "text", text: "B finished it" }]),
    ]);
    assert.deepStrictEqual(events.map((event) => event.seq), events.map((_, i) => i + 1));
    assert.equal(count(events, "turn/start"), 1, "the open turn was resumed, not started again");
    modelA.open("hold");
    await until("node A to stop the agent", () => a.agents.get("a3") === undefined);
    assert.deepStrictEqual(await b.sessions.read("a3"), events);
  },
});
