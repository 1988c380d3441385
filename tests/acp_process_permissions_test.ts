/**
 * A permission round trip through a real `trt acp` child: the approvals row parks each Write, the SDK client
 * answers `session/request_permission` with allow_once, reject_once and allow_always, and the session rule
 * allow_always left admits the next identical call without asking; with the `interfaces.acp` row's `client_fs`
 * the allowed writes go through the editor.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import {
  createAgentStack,
  fakeOpenRouter,
  sseResponse,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";
import { writeTree } from "./fixtures/composition/tree.ts";
import { newSession, spawnAcp } from "./acp_client.ts";

Deno.test("trt acp asks the client about parked calls: allow_once, reject_once and allow_always, whose rule admits the next call", async () => {
  await using server = await fakeOpenRouter();
  await using tree = await writeTree({ "work/.keep": "" });
  const work = await Deno.realPath(tree.path("work"));
  const write = (id: string, name: string, content: string) =>
    sseResponse(toolCallTurn([{
      id,
      name: "Write",
      args: { file_path: `${work}/${name}`, content },
    }]));
  server.script(
    write("w1", "a.txt", "one"),
    write("w2", "b.txt", "two"),
    write("w3", "c.txt", "three"),
    write("w4", "c.txt", "four"),
    sseResponse(textTurn("done")),
  );
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
      "  - id: tools.allow",
      "    config: { allow: [Write] }",
      "  - id: titles",
      "    config: { auto: false }",
      // Writes go through the editor (it offers fs.writeTextFile).
      "  - id: interfaces.acp",
      "    plugin: terret-acp",
      "    config: { client_fs: true }",
      "",
    ].join("\n"),
  );
  const child = spawnAcp(tree.path("home"), tree.path("patch.yml"));
  const answers = ["allow_once", "reject_once", "allow_always"];
  const asked: string[] = [];
  const updates: acp.SessionUpdate[] = [];
  const written: string[] = [];
  const connection = acp.client({ name: "editor" })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      written.push(`${params.path} ${params.content}`);
      await Deno.writeTextFile(params.path, params.content);
      return {};
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params.toolCall.toolCallId);
      const optionId = answers[asked.length - 1];
      return optionId === undefined
        ? { outcome: { outcome: "cancelled" } }
        : { outcome: { outcome: "selected", optionId } };
    })
    .connect(child.stream);
  let sessionId = "";
  try {
    await connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: true } },
      clientInfo: { name: "editor", version: "1.0.0" },
    });
    sessionId = await newSession(connection.agent, work);
    assert.deepStrictEqual(
      await connection.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "write" }],
      }),
      { stopReason: "end_turn" },
    );
    assert.deepStrictEqual(asked, ["w1", "w2", "w3"], "the fourth call was not asked about");
    assert.deepStrictEqual(
      updates.flatMap((update) =>
        update.sessionUpdate === "tool_call_update" ? [`${update.toolCallId} ${update.status}`] : []
      ),
      ["w1 completed", "w2 failed", "w3 completed", "w4 completed"],
    );
    assert.deepStrictEqual(
      await Promise.all(["a.txt", "c.txt"].map((name) => Deno.readTextFile(`${work}/${name}`))),
      ["one", "four"],
    );
    await assert.rejects(Deno.stat(`${work}/b.txt`), Deno.errors.NotFound);
    // The allowed writes went through the editor (the row's client_fs), the rejected one nowhere.
    assert.deepStrictEqual(written, [
      `${work}/a.txt one`,
      `${work}/c.txt three`,
      `${work}/c.txt four`,
    ]);
  } finally {
    connection.close();
    await child.child.stdin.close().catch(() => {});
  }
  assert.equal((await child.child.status).code, 0, await child.stderr);
  await child.checked;
  assert.deepStrictEqual(child.bad, []);
  // The log says who decided each call: the client three times, then the session rule allow_always left.
  const db = [...Deno.readDirSync(tree.path("home/sessions"))].find((entry) =>
    entry.name.endsWith(".db")
  );
  await using store = await createAgentStack({
    sqlitePath: tree.path(`home/sessions/${db?.name}`),
  });
  const resolved = (await store.sessions.read(sessionId)).flatMap((event) =>
    event.type === "approval/resolved" ? [event.payload as Record<string, unknown>] : []
  ).map(({ request_id: _id, ...rest }) => rest);
  const by = { kind: "acp", id: "editor" };
  // The fourth call has no approval event: the session rule admitted it without parking.
  assert.deepStrictEqual(resolved, [
    { by, decision: "allow", reason: "allowed once by the ACP client" },
    { by, decision: "deny", reason: "rejected by the ACP client" },
    {
      by,
      decision: "allow",
      reason: "always allowed by the ACP client",
      rule: `Write(${work}/c.txt)`,
    },
  ]);
});
