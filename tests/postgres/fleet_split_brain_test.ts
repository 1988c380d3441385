/**
 * Split brain with real processes: node A runs a turn, its model stream open, and is paused with SIGSTOP past its
 * lease ttl; node B takes the agent over, resumes the turn and appends to its session until the turn ends; then A is
 * resumed with SIGCONT, with more of its model stream waiting for it. A's first write after resuming is refused by
 * the fencing token (`StaleFencingToken`: its lease renewal, which its overdue timer sends first, or an append),
 * A stops running the agent (its model stream is cancelled and it logs the lost lease), and the log, which records
 * the node and fencing token of every append, shows no append of A's after B's first.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { chunk, fakeOpenRouter, sse, sseResponse, textTurn } from "@terret/core/testing";
import { PostgresSessionStore } from "@terret/core/postgres";
import { type Frame, within, WsClient } from "../ws/_clients.ts";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { postgresLane } from "./cluster.ts";
import { assertOneWriterAtATime, nodePatch, writtenRows } from "./_fleet_nodes.ts";

const lane = await postgresLane();
const url = lane.cluster === undefined ? "" : await lane.cluster.createDatabase("split_brain");
const TOKEN = "fleet-split-brain-token-0123456789abcdef";
const LEASE_TTL_SECONDS = 1;

const eventOf = (frame: Frame): SessionEvent => frame.event as SessionEvent;
const isType = (type: string) => (frame: Frame): boolean =>
  frame.type === "event" && eventOf(frame).type === type;

Deno.test({
  name:
    "split brain: a node paused past its lease resumes after another took over, its next write is refused " +
    "by the fencing token and it stops the agent",
  ignore: lane.skip !== undefined,
  fn: async () => {
    await using treeA = await writeTree({});
    await using treeB = await writeTree({});
    await using model = await fakeOpenRouter();
    const patch = (dir: string, node: string): Promise<string> =>
      nodePatch(dir, {
        url,
        node,
        model: model.url,
        token: TOKEN,
        workspace: `${treeA.dir}/work`,
        leaseTtlSeconds: LEASE_TTL_SECONDS,
      });
    model.script(
      // Node A's request: text that keeps coming (a piece every 50 ms for a minute), so that pieces wait in A's
      // socket while it is paused; then the stream stays open.
      {
        body: sse(
          ...Array.from({ length: 1200 }, () => chunk({ role: "assistant", content: "more " })),
        ),
        chunks: Array.from(
          { length: 1200 },
          () => sse(chunk({ role: "assistant", content: "more " })).length,
        ),
        delayMs: 50,
        end: "hold",
      },
      sseResponse(textTurn(["Answered on node B."])),
    );
    const a = await serve(treeA.dir, [await patch(treeA.dir, "node-a")]);
    let aStopped = false;
    try {
      const b = await serve(treeB.dir, [await patch(treeB.dir, "node-b")]);
      try {
        const stream = (port: number) => `ws://127.0.0.1:${port}/v1/agents/op/stream`;
        const onA = await WsClient.open(stream(a.port), { token: TOKEN });
        assert.equal((await onA.next()).type, "hello");
        onA.send({ type: "subscribe", from_seq: 1 });
        onA.send({
          type: "message",
          content: "Answer on whichever node holds the lease",
          ref: "m",
        });
        // A is mid-step: its model stream has begun.
        await onA.readUntil(isType("user/message"), 60_000);
        await model.waitForRequests(1, { timeoutMs: 60_000 });
        Deno.kill(a.pid, "SIGSTOP");

        // B takes the lease over once A's has expired, resumes the open turn and ends it.
        const onB = await WsClient.open(stream(b.port), { token: TOKEN });
        assert.equal((await onB.next()).type, "hello");
        onB.send({ type: "subscribe", from_seq: 1 });
        const seen = (await onB.readUntil(isType("turn/end"), 60_000))
          .filter((frame) => frame.type === "event").map(eventOf);
        assert.deepStrictEqual(seen.at(-1)!.payload, { status: "completed" });
        assert.equal(model.requests.length, 2);

        // A wakes up with its expired lease, its model stream's pieces waiting: it stops the agent, cancelling the
        // stream, and writes nothing more.
        Deno.kill(a.pid, "SIGCONT");
        assert.equal(
          await within(model.exchanges[0]!.ended, 60_000, "A to stop the agent"),
          "client_closed",
        );
        const { code, stderr } = await a.stop();
        aStopped = true;
        assert.equal(code, 0);
        const lost = stderr.split("\n").filter((line) => line.includes("lost its lease"))
          .map((line) => JSON.parse(line) as { message: string; error: { message: string } });
        assert.equal(lost.length, 1, stderr);
        assert.equal(lost[0]!.message, `Agent "op" lost its lease to another node; it stops here`);
        assert.match(
          lost[0]!.error.message,
          /^Cannot (renew the lease of|append to) session "op" under fencing token 1\b/,
        );
        // deno-lint-ignore no-console -- which write of A's the fencing token refused first
        console.log(`split brain: node A was refused: ${lost[0]!.error.message}`);

        const store = await PostgresSessionStore.open({ url, listen: false });
        try {
          assert.deepStrictEqual(await store.read("op"), seen);
        } finally {
          await store.close();
        }
        const rows = await writtenRows(url, ["op"]);
        const writers = assertOneWriterAtATime(rows);
        assert.deepStrictEqual(writers, [{ token: 1, node: "node-a" }, {
          token: 2,
          node: "node-b",
        }]);
        const takeover = rows.findIndex((row) => row.fencing_token === 2);
        assert.deepStrictEqual(rows.slice(takeover).filter((row) => row.node === "node-a"), []);
        await onA.close();
        await onB.close();
      } finally {
        assert.equal((await b.stop()).code, 0);
      }
    } finally {
      if (!aStopped) {
        Deno.kill(a.pid, "SIGCONT");
        await a.kill();
      }
    }
  },
});
