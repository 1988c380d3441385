/**
 * A hostile reconnect storm (issue: replay never starves the live path): 500 connections of one tenant subscribe
 * from seq 1 to a 2 MiB history and never read. Another tenant's `hello` is not queued behind that replay work, the
 * bytes replays hold stay within `replay_budget_bytes`, and the other tenant's live tail flows. (On loopback the
 * kernel's socket buffers take much of each 2 MiB before Deno queues any; the scheduler's own test drives the budget
 * with sockets that never drain.)
 */
import assert from "node:assert/strict";
import { createContext, createMemoryLogger } from "@terret/hames";
import { SessionLog } from "@terret/core";
import { SqliteSessionStore } from "@terret/core/sessions";
import { type AgentGateway, wsConfig, WsServer } from "@terret/ws";
import { until } from "../../exec/process/_testing.ts";
import { RawClient, WsClient } from "./_clients.ts";
import { chunk, eventFrame } from "./_harness.ts";

const HOSTILE = 500;
const BUDGET = 8 * 1024 * 1024;
const EVENT_TEXT = "z".repeat(32 * 1024);
const HOSTILE_TOKEN = "hostile-token-0123456789abcdefgh";
const CALM_TOKEN = "calm-token-0123456789abcdefghijk";

Deno.test("500 connections replaying from seq 1 and never reading: another tenant's hello is not queued behind their replays, and replays hold at most the budget", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-storm-" });
  const store = SqliteSessionStore.open({ path: `${dir}/sessions.db` });
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const sessions = new SessionLog(ctx, store);
  await sessions.create({ session_id: "big" });
  for (let i = 0; i < 64; i++) await sessions.append("big", chunk(`${i} ${EVENT_TEXT}`)); // 2 MiB of history
  await sessions.create({ session_id: "calm" });
  // Every hostile agent id reads the one big session; the calm tenant has its own.
  const gateway: AgentGateway = {
    open: (agentId) =>
      Promise.resolve({
        agentId,
        sessionId: agentId.startsWith("hostile-") ? "big" : "calm",
        ready: () => Promise.resolve(),
        message: () => Promise.resolve(),
        steer: () => Promise.resolve(),
        cancel: () => Promise.resolve(),
        dispose: () => Promise.resolve(),
      }),
    state: () => ({ status: "idle", resident: false }),
    figures: () => ({ resident: 0, busy: 0, max: 128 }),
  };
  const server = await WsServer.start({
    sessions,
    agents: gateway,
    config: wsConfig.parse({
      port: 0,
      tokens: [{ token: HOSTILE_TOKEN, agents: ["hostile-*"] }, {
        token: CALM_TOKEN,
        agents: ["calm"],
      }],
      replay_budget_bytes: BUDGET,
      send_timeout_seconds: 600, // the hostile readers stay for the whole test
      // The hostile tenant is allowed its 500 sockets: what is under test is replay, not the per-token bound.
      max_connections_per_token: 1000,
    }),
  });
  const hostile: RawClient[] = [];
  try {
    const auth = { Authorization: `Bearer ${HOSTILE_TOKEN}` };
    const subscribe = new TextEncoder().encode(JSON.stringify({ type: "subscribe", from_seq: 1 }));
    for (let batch = 0; batch < HOSTILE; batch += 50) {
      await Promise.all(Array.from({ length: 50 }, async (_, i) => {
        const { client, head } = await RawClient.upgrade(
          server.port,
          `/v1/agents/hostile-${batch + i}/stream`,
          auth,
        );
        assert.equal(head.status, 101);
        hostile.push(client);
        await client.sendFrame(0x1, subscribe); // then never read again
      }));
    }
    // The storm is on: hundreds of replays are queued behind the ones taking turns.
    await until(
      "the hostile replays to queue",
      () => server.stats().replays_waiting >= 100,
      60_000,
    );

    const began = performance.now();
    const calm = await WsClient.open(`ws://127.0.0.1:${server.port}/v1/agents/calm/stream`, {
      token: CALM_TOKEN,
    });
    const hello = await calm.next();
    const helloMs = performance.now() - began;
    const during = server.stats();
    assert.deepStrictEqual(hello, {
      type: "hello",
      protocol: 1,
      agent_id: "calm",
      session_id: "calm",
      head_seq: 1,
    });
    // The structural property: the hello was sent while the hostile replay work was still queued, not after it.
    assert.ok(
      during.replays_waiting > 0,
      `the hello came after the replay work: ${JSON.stringify(during)}`,
    );
    // A generous bound on a loaded 2-core machine (the target is 50 ms; the bench reports the real figure): what
    // it rules out is the hello waiting for the storm's replays, which take far longer.
    assert.ok(helloMs < 1000, `the hello took ${helloMs.toFixed(0)} ms`);

    // The calm tenant's live tail flows (it has nothing to replay but seq 1, which is smaller than one slice).
    calm.send({ type: "subscribe", from_seq: 2, ref: "s" });
    assert.deepStrictEqual(await calm.next(), { type: "ack", ref: "s" });
    const live = await sessions.append("calm", chunk("live while the storm runs"));
    assert.deepStrictEqual(await calm.next(), eventFrame(live));

    // Memory: what replays hold (sockets' queues plus one page each) never passed the budget by more than the
    // frame that crossed it.
    const stats = server.stats();
    assert.ok(
      stats.replay_bytes_peak <= BUDGET + 64 * 1024,
      `replays held ${stats.replay_bytes_peak} bytes, over the budget of ${BUDGET}`,
    );
    assert.equal(stats.connections, HOSTILE + 1);
    await calm.close();
  } finally {
    for (const client of hostile) client.close();
    await server.close();
    await ctx.dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
