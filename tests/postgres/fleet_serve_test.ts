/**
 * Two real `trt serve` processes on one PostgreSQL store: each prints its fleet node id, and a socket client
 * connected to node B sees, live, a multi-step turn that node A runs for a client connected to A, event for event
 * as stored (no gap, no duplicate), while B runs nothing. The model is a fake OpenRouter in this test process.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { PostgresSessionStore } from "@terret/core/postgres";
import { type Frame, WsClient } from "../ws/_clients.ts";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { postgresLane } from "./cluster.ts";
import { stablePort } from "../ports.ts";
import { nodePatch } from "./_fleet_nodes.ts";

const lane = await postgresLane();
const url = lane.cluster === undefined ? "" : await lane.cluster.createDatabase("fleet");
const TOKEN = "fleet-serve-token-0123456789abcdef";

const eventOf = (frame: Frame): SessionEvent => frame.event as SessionEvent;
const isType = (type: string) => (frame: Frame): boolean =>
  frame.type === "event" && eventOf(frame).type === type;

async function nodePatchOf(dir: string, node: string, model: string): Promise<string> {
  const patch = await nodePatch(dir, {
    url,
    node,
    model,
    token: TOKEN,
    workspace: `${dir}/work`,
    allow: ["Read"],
  });
  await Deno.writeTextFile(`${dir}/work/notes.txt`, "fleet notes\n");
  return patch;
}

Deno.test({
  name:
    "two trt serve nodes on one PostgreSQL: a client on node B tails, live, the turn node A runs",
  ignore: lane.skip !== undefined,
  fn: async () => {
    await using treeA = await writeTree({});
    await using treeB = await writeTree({});
    await using model = await fakeOpenRouter();
    model.script(
      sseResponse(
        toolCallTurn([{
          id: "call_1",
          name: "Read",
          args: { file_path: `${treeA.dir}/work/notes.txt` },
        }]),
      ),
      sseResponse(textTurn(["The notes ", "say fleet."])),
    );
    const a = await serve(treeA.dir, [await nodePatchOf(treeA.dir, "node-a", model.url)]);
    try {
      const b = await serve(treeB.dir, [await nodePatchOf(treeB.dir, "node-b", model.url)]);
      try {
        const shown = `postgres://terret@127.0.0.1:${lane.cluster!.port}/fleet`;
        for (const [served, node] of [[a, "node-a"], [b, "node-b"]] as const) {
          assert.ok(
            served.lines.includes(
              `trt serve: fleet node "${node}" on the PostgreSQL session store "${shown}" (schema "terret")`,
            ),
            served.lines.join("\n"),
          );
        }
        const stream = (port: number) => `ws://127.0.0.1:${port}/v1/agents/op/stream`;
        const onB = await WsClient.open(stream(b.port), { token: TOKEN });
        assert.equal((await onB.next()).type, "hello");
        onB.send({ type: "subscribe", from_seq: 1 });
        const onA = await WsClient.open(stream(a.port), { token: TOKEN });
        assert.equal((await onA.next()).type, "hello");
        onA.send({ type: "subscribe", from_seq: 1 });
        onA.send({ type: "message", content: "What do the notes say?", ref: "m" });
        const seenOnA = (await onA.readUntil(isType("turn/end"), 60_000))
          .filter((frame) => frame.type === "event").map(eventOf);
        const seenOnB = (await onB.readUntil(isType("turn/end"), 60_000))
          .filter((frame) => frame.type === "event").map(eventOf);
        assert.deepStrictEqual(seenOnB, seenOnA);
        assert.deepStrictEqual(seenOnB.map((e) => e.seq), seenOnB.map((_, i) => i + 1));
        assert.deepStrictEqual(
          seenOnB.filter((e) => !e.type.endsWith("chunk")).map((e) => e.type),
          [
            "session/created",
            "input/queued",
            "turn/start",
            "step/start",
            "user/message",
            "assistant/message",
            "tool/call",
            "tool/result",
            "step/end",
            "step/start",
            "assistant/message",
            "step/end",
            "turn/end",
          ],
        );
        assert.deepStrictEqual(seenOnB.at(-1)!.payload, { status: "completed" });
        // The Read ran on node A and its result is the file's text.
        const result = seenOnB.find((e) => e.type === "tool/result")!.payload as {
          content: string;
          is_error: boolean;
        };
        assert.deepStrictEqual([result.is_error, result.content.includes("fleet notes")], [
          false,
          true,
        ]);
        // Node A ran the turn once: two model requests, and the store holds exactly what both clients saw.
        assert.equal(model.requests.length, 2);
        const store = await PostgresSessionStore.open({ url, listen: false });
        try {
          assert.deepStrictEqual(await store.read("op"), seenOnB);
        } finally {
          await store.close();
        }
        await onA.close();
        await onB.close();
      } finally {
        assert.equal((await b.stop()).code, 0);
      }
    } finally {
      assert.equal((await a.stop()).code, 0);
    }
  },
});

const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));

async function trt(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test({
  name: "trt serve with PostgreSQL down exits 1 with one error naming the URL without its password",
  ignore: lane.skip !== undefined,
  fn: async () => {
    await using tree = await writeTree({});
    const patch = await nodePatchOf(tree.dir, "node-down", "http://127.0.0.1:9");
    // The same cluster's port with the server stopped would race the other tests; a port nobody listens on is down
    // (below the ephemeral range, so no parallel test's listener is handed it meanwhile).
    const port = stablePort();
    const down = `postgres://terret:s3cret-down@127.0.0.1:${port}/fleet`;
    await Deno.writeTextFile(patch, (await Deno.readTextFile(patch)).replace(url, down));
    const { code, stdout, stderr } = await trt(["serve", "--home", tree.dir, "--patch", patch]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    const last = stderr.trimEnd().split("\n").at(-1);
    assert.equal(
      last,
      `trt serve: Cannot boot: row "sessions.store" failed to start: Cannot open the PostgreSQL session store ` +
        `"postgres://terret@127.0.0.1:${port}/fleet": connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    assert.ok(!stderr.includes("s3cret-down"), stderr);
  },
});

Deno.test({
  name: "trt doctor reports the PostgreSQL row's connection, schema version and clock skew",
  ignore: lane.skip !== undefined,
  fn: async () => {
    await using tree = await writeTree({});
    const patch = await nodePatchOf(tree.dir, "node-doctor", "http://127.0.0.1:9");
    const fresh = await lane.cluster!.createDatabase("doctor");
    await Deno.writeTextFile(patch, (await Deno.readTextFile(patch)).replace(url, fresh));
    const doctor = async (): Promise<string[]> => {
      const { stdout } = await trt(["doctor", "--home", tree.dir, "--patch", patch]);
      return stdout.split("\n").filter((line) => /^\S+\s+postgres /.test(line));
    };
    const shown = `postgres://terret@127.0.0.1:${lane.cluster!.port}/doctor`.replaceAll(".", "\\.");
    const reaches = new RegExp(
      `^ok +postgres sessions\\.store: row "sessions\\.store" reaches "${shown}" \\(PostgreSQL 1\\d\\.\\d+ `,
    );
    const skew =
      /^ok +postgres sessions\.store: row "sessions\.store": clock skew -?\d+ ms \(±\d+ ms\), within 1000 ms$/;
    const before = await doctor();
    assert.equal(before.length, 3, before.join("\n"));
    assert.match(before[0]!, reaches);
    assert.match(
      before[1]!,
      /^ok +postgres sessions\.store: row "sessions\.store": schema "terret" is at version 0; the store migrates it to 4 when it opens$/,
    );
    assert.match(before[2]!, skew);
    // Opening the store migrates the schema; the doctor then reads the current version.
    await (await PostgresSessionStore.open({ url: fresh, listen: false })).close();
    const after = await doctor();
    assert.equal(after.length, 3, after.join("\n"));
    assert.match(after[0]!, reaches);
    assert.match(
      after[1]!,
      /^ok +postgres sessions\.store: row "sessions\.store": schema "terret" is at version 4$/,
    );
    assert.match(after[2]!, skew);
  },
});
