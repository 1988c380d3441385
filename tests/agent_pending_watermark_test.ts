/**
 * A leased agent reads the log's unclaimed input at every acquire, turn end and lease renewal (another node may have
 * queued or claimed some). Each read starts after the agent's watermark, the seq at or below which every queued
 * input is claimed, so it costs the input since the last read, not the session's whole history; input another node
 * queued or claimed is still seen.
 */
import assert from "node:assert/strict";
import { type Context, definePlugin, type PluginLike } from "@terret/hames";
import {
  MemorySessionStore,
  type SessionStore,
  SessionStoreKey,
  type StoreReadOptions,
} from "@terret/core/sessions";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
import { MemoryLeases, storeWithLeases } from "./_memory_leases.ts";

/** The memory store, recording the `from_seq` of every read of `input/queued`. */
function recordingStore(queuedReads: number[]): MemorySessionStore {
  const inner = new MemorySessionStore();
  return new Proxy(inner, {
    get(target, key) {
      if (key === "read") {
        return (id: string, options: StoreReadOptions = {}) => {
          if (options.types?.includes("input/queued")) queuedReads.push(options.from_seq ?? 1);
          return target.read(id, options);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("a leased agent's reads of its queued input start after what the log shows claimed, and still see other nodes' input", async () => {
  const queuedReads: number[] = [];
  const leases = new MemoryLeases("node-a", 3_600_000);
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      textReply("One."),
      textReply("Two."),
      textReply("Three."),
      textReply("Four."),
      textReply("From the other node."),
    ]),
    store: { plugin: storeWithLeases(leases, recordingStore(queuedReads)) },
  });
  const agent = await stack.agents.create({ agent_id: "a" });
  const queuedSeqs: number[] = [];
  for (const content of ["m1", "m2", "m3"]) {
    queuedReads.length = 0;
    queuedSeqs.push(await agent.enqueue({ kind: "message", content }));
    await agent.idle();
    // Every read this turn made starts past the input the turns before it claimed.
    const claimedBefore = queuedSeqs.at(-2) ?? 0;
    assert.ok(queuedReads.length > 0, "the leased agent read its queued input");
    for (const from of queuedReads) {
      assert.ok(from > claimedBefore, `a read from ${from}, after ${claimedBefore} was claimed`);
    }
  }

  // Another node queues a message for this agent (durable in the log, not in this node's inbox) and claims one it
  // queued itself; then this node queues one: the acquire for its turn reads the log, and the agent runs the other
  // node's unclaimed message as well, never the claimed one.
  const theirs = await stack.sessions.append("a", {
    type: "input/queued",
    payload: { kind: "message", content: "from node b", wake: true },
  });
  const claimedThere = await stack.sessions.append("a", {
    type: "input/queued",
    payload: { kind: "message", content: "claimed by node b", wake: true },
  });
  await stack.sessions.append("a", {
    type: "user/message",
    payload: { content: "claimed by node b", queued_seq: claimedThere.seq },
  });
  queuedSeqs.push(await agent.enqueue({ kind: "message", content: "m4" }));
  await agent.idle();

  const messages = (await stack.sessions.read("a", { types: ["user/message"] })).map((event) =>
    event.payload as { content: string; queued_seq?: number }
  );
  assert.deepStrictEqual(messages, [
    { content: "m1", queued_seq: queuedSeqs[0] },
    { content: "m2", queued_seq: queuedSeqs[1] },
    { content: "m3", queued_seq: queuedSeqs[2] },
    { content: "claimed by node b", queued_seq: claimedThere.seq },
    // This node's message was in its inbox before the read added the other node's.
    { content: "m4", queued_seq: queuedSeqs[3] },
    { content: "from node b", queued_seq: theirs.seq },
  ]);
  const answers = (await stack.sessions.read("a", { types: ["assistant/message"] })).map((event) =>
    (event.payload as { parts: { text: string }[] }).parts[0]!.text
  );
  assert.deepStrictEqual(answers, ["One.", "Two.", "Three.", "Four.", "From the other node."]);
});

/** A plugin providing `store` as the session store (no leases: one process drives its agents). */
function storeOnly(store: SessionStore): PluginLike {
  return definePlugin({
    name: "test-recording-store",
    provides: [SessionStoreKey],
    apply(ctx: Context): void {
      ctx.provide(SessionStoreKey, store);
    },
  });
}

Deno.test("an agent made resident again reads its queued input after what the log showed claimed as it left, and still runs input queued while it was out", async () => {
  const queuedReads: number[] = [];
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      textReply("One."),
      textReply("Two."),
      textReply("While away."),
      textReply("Three."),
    ]),
    store: { plugin: storeOnly(recordingStore(queuedReads)) },
  });
  let agent = await stack.agents.create({ agent_id: "a" });
  const queuedSeqs: number[] = [];
  for (const content of ["m1", "m2"]) {
    queuedSeqs.push(await agent.enqueue({ kind: "message", content }));
    await agent.idle();
  }
  await stack.agents.disposeAgent("a");
  // Queued while no agent drove the session: durable in the log only.
  const away = await stack.sessions.append("a", {
    type: "input/queued",
    payload: { kind: "message", content: "while away", wake: true },
  });
  queuedReads.length = 0;
  agent = await stack.agents.ensure("a");
  await agent.idle();
  // The read as it came back started past the input it had claimed (not at seq 1), and found the one queued since.
  assert.deepStrictEqual(queuedReads, [queuedSeqs[1]! + 1]);

  await stack.agents.disposeAgent("a");
  queuedReads.length = 0;
  agent = await stack.agents.ensure("a");
  queuedSeqs.push(await agent.enqueue({ kind: "message", content: "m3" }));
  await agent.idle();
  assert.ok(
    queuedReads.length > 0 && queuedReads.every((from) => from > away.seq),
    `${queuedReads}`,
  );

  const messages = (await stack.sessions.read("a", { types: ["user/message"] })).map((event) =>
    event.payload as { content: string; queued_seq?: number }
  );
  assert.deepStrictEqual(messages, [
    { content: "m1", queued_seq: queuedSeqs[0] },
    { content: "m2", queued_seq: queuedSeqs[1] },
    { content: "while away", queued_seq: away.seq },
    { content: "m3", queued_seq: queuedSeqs[2] },
  ]);
});
