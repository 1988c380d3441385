/**
 * `trt acp` as a real child process driven by the ACP SDK's client over pipes: every stdout line is a JSON-RPC
 * message, a client that dies mid-turn never cancels the turn, and a new `trt acp` on the same home replays it.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { fakeOpenRouter, sseResponse, textTurn } from "@terret/core/testing";
import { writeTree } from "./fixtures/composition/tree.ts";
import { newSession, spawnAcp } from "./acp_client.ts";

function client(updates: acp.SessionUpdate[]) {
  return acp.client({ name: "editor" }).onNotification(
    acp.methods.client.session.update,
    ({ params }) => {
      updates.push(params.update);
    },
  );
}

function texts(updates: readonly acp.SessionUpdate[], kind: string): string {
  let text = "";
  for (const update of updates) {
    if (update.sessionUpdate !== kind || !("content" in update)) continue;
    const content = update.content as { type?: string; text?: string } | null;
    if (content?.type === "text") text += content.text ?? "";
  }
  return text;
}

const INIT: acp.InitializeRequest = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
};

Deno.test("trt acp speaks only ACP on stdout, and a turn whose client died finishes and is replayed by a new trt acp", async () => {
  await using server = await fakeOpenRouter();
  const pieces = Array.from({ length: 12 }, (_, index) => `p${index} `);
  server.script(
    sseResponse(textTurn(["Hel", "lo"])),
    // The second turn streams slowly, so the client is gone before it ends (its end does not depend on when).
    sseResponse(textTurn(pieces), { chunks: pieces.length, delayMs: 40 }),
  );
  await using tree = await writeTree({ "work/.keep": "" });
  const work = await Deno.realPath(tree.path("work"));
  await Deno.writeTextFile(
    tree.path("patch.yml"),
    [
      "rows:",
      "  - id: workspace",
      `    config: { dirs: ["${work}"] }`,
      "  - id: llm.main",
      `    config: { model: test/model, base_url: "${server.url}", api_key: sk-test, max_retries: 0 }`,
      "  - id: sandbox",
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      // The fake model scripts the turns only: no title call.
      "  - id: titles",
      "    config: { auto: false }",
      "",
    ].join("\n"),
  );
  const home = tree.path("home");
  const first = spawnAcp(home, tree.path("patch.yml"));
  const live: acp.SessionUpdate[] = [];
  const connection = client(live).connect(first.stream);
  let sessionId = "";
  try {
    const init = await connection.agent.request(acp.methods.agent.initialize, INIT);
    assert.equal(init.protocolVersion, 1);
    sessionId = await newSession(connection.agent, work);
    const answer = await connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    assert.deepStrictEqual(answer, { stopReason: "end_turn" });
    assert.equal(texts(live, "agent_message_chunk"), "Hello");
    // The second prompt: the client dies once the first chunk has arrived.
    const before = live.length;
    const pending = connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "count" }],
    }).catch((error: unknown) => error);
    const deadline = Date.now() + 60_000;
    while (!live.slice(before).some((update) => update.sessionUpdate === "agent_message_chunk")) {
      assert.ok(Date.now() < deadline, "no chunk of the second turn arrived");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    connection.close();
    await pending;
    await first.child.stdin.close().catch(() => {});
  } finally {
    connection.close();
  }
  // The orphaned process finishes the turn in the log, then exits on its own.
  assert.equal((await first.child.status).code, 0, await first.stderr);
  await first.checked;
  assert.deepStrictEqual(first.bad, [], "every stdout line is a JSON-RPC message");
  assert.ok(first.lines.length > 0);

  const second = spawnAcp(home, tree.path("patch.yml"));
  const replay: acp.SessionUpdate[] = [];
  const again = client(replay).connect(second.stream);
  try {
    await again.agent.request(acp.methods.agent.initialize, INIT);
    await again.agent.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: work,
      mcpServers: [],
    });
    assert.equal(texts(replay, "user_message_chunk"), "hicount");
    assert.equal(texts(replay, "agent_message_chunk"), `Hello${pieces.join("")}`);
  } finally {
    again.close();
    await second.child.stdin.close().catch(() => {});
  }
  assert.equal((await second.child.status).code, 0, await second.stderr);
  await second.checked;
  assert.deepStrictEqual(second.bad, []);
});
