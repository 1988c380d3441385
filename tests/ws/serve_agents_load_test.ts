/**
 * Many agents through a real `trt serve` with a small resident cap: one token touches 1,000 agent ids (each gets a
 * durable session and is made resident, evicting the least recently used idle one) while a second token's agent
 * keeps running turns; the second is never refused, and the directory never shows more resident agents than
 * `max_agents`.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { WsClient } from "./_clients.ts";
import { replayedServePatch, serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const BULK = "bulk-tenant-token-0123456789abcdef";
const STEADY = "steady-tenant-token-0123456789abcdef";
const MAX_AGENTS = 16;
const IDS = 1000;
const PARALLEL = 8;

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

interface Summary {
  readonly agent_id: string;
  readonly resident: boolean;
}

async function residents(port: number): Promise<Summary[]> {
  const all: Summary[] = [];
  let after: string | null = null;
  do {
    const query: string = after === null ? "" : `&after=${after}`;
    const response = await fetch(`http://127.0.0.1:${port}/v1/agents?limit=1000${query}`, {
      headers: { authorization: `Bearer ${BULK}` },
    });
    const page = await response.json() as { agents: Summary[]; next_after: string | null };
    all.push(...page.agents);
    after = page.next_after;
  } while (after !== null);
  return all;
}

Deno.test("1,000 agent ids touched by one token while another token's agent keeps working: never refused, resident <= max_agents", async () => {
  await using tree = await writeTree({
    "serve.yml": replayedServePatch([
      "      port: 0",
      `      tokens: [{ token: ${BULK}, agents: ["*"] }, { token: ${STEADY}, agents: ["steady"] }]`,
    ], [
      "  - id: agents",
      `    config: { max_agents: ${MAX_AGENTS} }`,
    ]),
  });
  const served = await serve(tree.dir, [tree.path("serve.yml")]);
  const url = (id: string): string => `ws://127.0.0.1:${served.port}/v1/agents/${id}/stream`;
  const steady = await WsClient.open(url("steady"), { token: STEADY });
  try {
    assert.equal((await steady.next(30_000)).type, "hello");
    steady.send({ type: "subscribe", from_seq: 1, ref: "s" });
    assert.deepStrictEqual(await steady.next(30_000), { type: "ack", ref: "s" });
    let next = 0;
    let touched = 0;
    let progressed: (() => void) | undefined;
    const touch = async (): Promise<void> => {
      for (let i = next++; i < IDS; i = next++) {
        const client = await WsClient.open(url(`bulk-${i}`), { token: BULK });
        try {
          await client.next(30_000);
          client.send({ type: "set_policy", allow: ["Read"], ref: "p" });
          assert.deepStrictEqual(await client.next(30_000), { type: "ack", ref: "p" });
        } finally {
          await client.close();
        }
        touched++;
        progressed?.();
      }
    };
    /** Resolves once the bulk tenant has touched `count` ids (or finished). */
    const bulkReached = async (count: number): Promise<void> => {
      while (touched < Math.min(count, IDS)) {
        await new Promise<void>((resolve) => progressed = resolve);
      }
    };
    const bulk = Promise.all(Array.from({ length: PARALLEL }, touch));
    // The steady agent runs turn after turn while the bulk tenant goes through its 1,000 ids.
    let turns = 0;
    let done = false;
    bulk.finally(() => done = true);
    while (!done || turns === 0) {
      // One turn per 50 ids touched: paced by the bulk tenant's progress, well under the frame rate.
      await bulkReached(turns * 50);
      steady.send({ type: "message", content: "Say hello in five words.", ref: `m${turns}` });
      const frames = await steady.readUntil(isTurnEnd, 30_000);
      assert.deepStrictEqual(frames.filter((frame) => frame.type === "error"), []);
      assert.deepStrictEqual((frames.at(-1)!.event as SessionEvent).payload, {
        status: "completed",
      });
      turns++;
    }
    await bulk;
    const listed = await residents(served.port);
    assert.equal(listed.length, IDS + 1);
    const resident = listed.filter((agent) => agent.resident).length;
    assert.ok(resident >= 1 && resident <= MAX_AGENTS, `${resident} resident agents`);
  } finally {
    await steady.close();
    const { code } = await served.stop();
    assert.equal(code, 0);
  }
});
