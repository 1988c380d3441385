/**
 * Caps one tenant cannot exhaust for all, through a real `trt serve` (issue 17 item 10, issue 16 lifecycle): 1,100
 * raw upgrades to one agent with one token that never read, and 2,000 sockets to distinct agents with one token,
 * leave another token's agent served; connections that send nothing leave no durable session behind.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { RawClient, WsClient } from "./_clients.ts";
import { replayedServePatch, serve, type Served } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const GREEDY = "greedy-tenant-token-0123456789abcdef";
const OTHER = "other-tenant-token-0123456789abcdef";

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

async function withServe(run: (served: Served) => Promise<void>): Promise<void> {
  await using tree = await writeTree({
    "serve.yml": replayedServePatch([
      "      port: 0",
      `      tokens: [{ token: ${GREEDY}, agents: ["*"] }, { token: ${OTHER}, agents: ["other-*"] }]`,
    ]),
  });
  const served = await serve(tree.dir, [tree.path("serve.yml")]);
  try {
    await run(served);
  } finally {
    const { code } = await served.stop();
    assert.equal(code, 0);
  }
}

/** The other tenant connects, sends a message and sees its turn complete. */
async function otherTenantServed(port: number): Promise<void> {
  const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/other-1/stream`, {
    token: OTHER,
  });
  try {
    assert.equal((await client.next(30_000)).type, "hello");
    client.send({ type: "subscribe", from_seq: 1, ref: "s" });
    client.send({ type: "message", content: "Say hello in five words.", ref: "m" });
    const frames = await client.readUntil(isTurnEnd, 30_000);
    assert.deepStrictEqual(
      frames.filter((frame) => frame.type === "ack").map((frame) => frame.ref),
      ["s", "m"],
    );
    assert.deepStrictEqual((frames.at(-1)!.event as SessionEvent).payload, { status: "completed" });
  } finally {
    await client.close();
  }
}

async function health(port: number): Promise<[number, string]> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  return [response.status, await response.text()];
}

Deno.test("1,100 raw upgrades to one agent with one token, never read, do not lock another token's agent out", async () => {
  await withServe(async (served) => {
    const held: RawClient[] = [];
    const statuses = new Map<string, number>();
    try {
      for (let i = 0; i < 1100; i++) {
        const { client, head } = await RawClient.upgrade(served.port, "/v1/agents/victim/stream", {
          Authorization: `Bearer ${GREEDY}`,
        });
        held.push(client);
        const key = head.status === 101 ? "101" : head.lines[0]!;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
      // Only the per-agent bound's worth were upgraded; every other attempt was refused at once, retryably.
      assert.deepStrictEqual([...statuses.keys()].sort(), [
        "101",
        "HTTP/1.1 429 Too Many Requests",
      ]);
      assert.ok(
        statuses.get("101")! >= 8 && statuses.get("101")! < 1100,
        JSON.stringify([...statuses]),
      );
      assert.deepStrictEqual(await health(served.port), [200, '{"status":"ok"}']);
      await otherTenantServed(served.port);
    } finally {
      for (const client of held) client.close();
    }
  });
});

Deno.test("2,000 sockets to distinct agents with one token do not lock another token out, and leave no session behind", async () => {
  await withServe(async (served) => {
    const held: RawClient[] = [];
    let upgraded = 0;
    let refused = 0;
    try {
      for (let i = 0; i < 2000; i++) {
        const { client, head } = await RawClient.upgrade(served.port, `/v1/agents/g-${i}/stream`, {
          Authorization: `Bearer ${GREEDY}`,
        });
        held.push(client);
        if (head.status === 101) upgraded++;
        else if (head.status === 429) refused++;
      }
      // The per-token bound (256 by default) held; the rest were refused.
      assert.deepStrictEqual([upgraded, refused], [256, 1744]);
      await otherTenantServed(served.port);
      // None of the 2,000 sent a frame: none left a durable session. The greedy token sees the other's agent only.
      const listed = await fetch(`http://127.0.0.1:${served.port}/v1/agents`, {
        headers: { authorization: `Bearer ${GREEDY}` },
      });
      const page = await listed.json() as { agents: { agent_id: string }[]; next_after: unknown };
      assert.deepStrictEqual(
        [page.agents.map((agent) => agent.agent_id), page.next_after],
        [["other-1"], null],
      );
    } finally {
      for (const client of held) client.close();
    }
  });
});
