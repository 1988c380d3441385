/**
 * A client-provided MCP server through a real `trt acp` child: the scripted MCP fixture given in `session/new` is
 * spawned through the profile's subprocess row for that session, its tool answers a model call, and `session/close`
 * stops it.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { writeTree } from "./fixtures/composition/tree.ts";
import { spawnAcp } from "./acp_client.ts";
import { alive, DENO, SCRIPTED } from "./mcp/_world.ts";

Deno.test("trt acp mounts a client's stdio MCP server for its session and stops it on session/close", async () => {
  await using server = await fakeOpenRouter();
  server.script(
    sseResponse(toolCallTurn([{ id: "m1", name: "mcp__scripted__pid", args: {} }])),
    sseResponse(textTurn("done")),
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
      "  - id: tools.allow",
      "    config: { allow: [mcp__scripted__pid] }",
      "  - id: approvals",
      "    config: { allow: [mcp__scripted__pid] }",
      "  - id: titles",
      "    config: { auto: false }",
      "",
    ].join("\n"),
  );
  const child = spawnAcp(tree.path("home"), tree.path("patch.yml"));
  const updates: acp.SessionUpdate[] = [];
  const connection = acp.client({ name: "editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .connect(child.stream);
  try {
    await connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
    });
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
      cwd: work,
      mcpServers: [{
        name: "scripted",
        command: DENO,
        args: ["run", "--no-config", SCRIPTED],
        env: [{ name: "NO_COLOR", value: "1" }],
      }],
    });
    assert.deepStrictEqual(
      await connection.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "pid?" }],
      }),
      { stopReason: "end_turn" },
    );
    const result = updates.find((update) => update.sessionUpdate === "tool_call_update");
    assert.equal(result?.sessionUpdate === "tool_call_update" && result.status, "completed");
    const text = result?.sessionUpdate === "tool_call_update"
      ? (result.content?.at(-1) as { content: { text: string } }).content.text
      : "";
    const pid = Number(text);
    assert.ok(Number.isInteger(pid) && pid > 0, `a pid, got ${text}`);
    assert.equal(await alive(pid), true);
    await connection.agent.request(acp.methods.agent.session.close, { sessionId });
    assert.equal(await alive(pid), false, "the closed session's MCP server process is gone");
  } finally {
    connection.close();
    await child.child.stdin.close().catch(() => {});
  }
  assert.equal((await child.child.status).code, 0, await child.stderr);
  await child.checked;
  assert.deepStrictEqual(child.bad, []);
});
