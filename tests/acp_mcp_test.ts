/**
 * Client-provided MCP servers over ACP: the scripted MCP fixture, given in one session's `session/new`, is mounted
 * through Terret's MCP client for that session only, its tools are governed by the allow list, and closing the
 * session stops its process.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";
import { noneSandboxPlugin, subprocessPlugin, workspacePlugin } from "@terret/exec";
import { serveAcp } from "@terret/acp";
import { alive, DENO, SCRIPTED, startScriptedHttp } from "./mcp/_world.ts";

const SCRIPTED_TOOLS = [
  "crash",
  "echo",
  "hang",
  "malformed",
  "pid",
  "set_roster",
  "weather",
].map((tool) => `mcp__scripted__${tool}`);

Deno.test("a client's MCP server is mounted for its session only, governed by the allow list, and stops with the session", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-acp-mcp-" }));
  const pidCall = { name: "mcp__scripted__pid", args: {} };
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([{ id: "a1", ...pidCall }, {
        id: "a2",
        name: "mcp__scripted__echo",
        args: { text: "x" },
      }]),
      textReply("A done"),
      toolCallsReply([{ id: "b1", ...pidCall }]),
      textReply("B done"),
    ]),
    allow: ["mcp__scripted__pid"],
    approvals: { allow: ["mcp__scripted__*"] },
    rows: [
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
      { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 500 } },
    ],
  });
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  serveAcp(acp.ndJsonStream(down.writable, up.readable), {
    sessions: stack.sessions,
    agents: stack.agents,
    roots: [dir],
  });
  const updates: { sessionId: string; update: acp.SessionUpdate }[] = [];
  const connection = acp.client({ name: "editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .connect(acp.ndJsonStream(up.writable, down.readable));
  const { agent } = connection;
  const results = (sessionId: string) =>
    updates.flatMap(({ sessionId: id, update }) =>
      id === sessionId && update.sessionUpdate === "tool_call_update"
        ? [{
          id: update.toolCallId,
          status: update.status,
          text: (update.content?.at(-1) as { content: { text: string } }).content.text,
        }]
        : []
    );
  try {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
    });
    assert.deepStrictEqual(init.agentCapabilities?.mcpCapabilities, { http: true, sse: false });
    const a = await agent.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [{
        name: "scripted",
        command: DENO,
        args: ["run", "--no-config", SCRIPTED],
        env: [{ name: "NO_COLOR", value: "1" }, { name: "DENO_NO_UPDATE_CHECK", value: "1" }],
      }],
    });
    const b = await agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const visible = (sessionId: string) =>
      stack.tools.list({ ctx: stack.agents.get(sessionId)!.ctx }).map((tool) => tool.name);
    assert.deepStrictEqual(visible(a.sessionId), SCRIPTED_TOOLS);
    assert.deepStrictEqual(visible(b.sessionId), []);
    assert.deepStrictEqual(stack.tools.list().map((tool) => tool.name), []);

    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, {
        sessionId: a.sessionId,
        prompt: [{ type: "text", text: "pid?" }],
      }),
      { stopReason: "end_turn" },
    );
    const [pidResult, echoResult] = results(a.sessionId);
    assert.equal(pidResult?.status, "completed");
    const pid = Number(pidResult!.text);
    assert.ok(Number.isInteger(pid) && pid > 0, `a pid, got ${pidResult!.text}`);
    assert.equal(await alive(pid), true);
    // The allow list governs the session's MCP tools like any tool.
    assert.deepStrictEqual(echoResult, {
      id: "a2",
      status: "failed",
      text:
        'Cannot run tool "mcp__scripted__echo": it is not on the allow list (denied by policy). ' +
        "Do not call it again; use a tool you are allowed to use or continue without it.",
    });

    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, {
        sessionId: b.sessionId,
        prompt: [{ type: "text", text: "pid?" }],
      }),
      { stopReason: "end_turn" },
    );
    assert.deepStrictEqual(results(b.sessionId), [{
      id: "b1",
      status: "failed",
      text:
        'Unknown tool "mcp__scripted__pid": no tool of this name is available. Call one of the ' +
        "tools you were offered, by its exact name.",
    }]);

    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.close, { sessionId: a.sessionId }),
      {},
    );
    assert.equal(await alive(pid), false, "the closed session's MCP server process is gone");
    assert.equal(stack.agents.get(a.sessionId), undefined);
    assert.equal(stack.agents.get(b.sessionId)?.session_id, b.sessionId);
  } finally {
    connection.close();
    await stack.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a client's http MCP server is mounted for its session, and a server that cannot start fails session/new naming it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-acp-mcp-http-" }));
  await using peer = await startScriptedHttp();
  await using stack = await createAgentStack({
    rows: [
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
      { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 500 } },
    ],
  });
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  serveAcp(acp.ndJsonStream(down.writable, up.readable), {
    sessions: stack.sessions,
    agents: stack.agents,
    roots: [dir],
  });
  const connection = acp.client({ name: "editor" })
    .connect(acp.ndJsonStream(up.writable, down.readable));
  const { agent } = connection;
  try {
    await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [{ type: "http", name: "web tools", url: peer.url, headers: [] }],
    });
    assert.deepStrictEqual(
      stack.tools.list({ ctx: stack.agents.get(sessionId)!.ctx }).map((tool) => tool.name),
      SCRIPTED_TOOLS.map((name) => name.replace("mcp__scripted__", "mcp__web_tools__")),
    );
    const failed = await agent.request(acp.methods.agent.session.new, {
      cwd: dir,
      mcpServers: [{ name: "broken", command: `${dir}/no-such-program`, args: [], env: [] }],
    }).then(() => undefined, (error: acp.RequestError) => error);
    const program = `${dir}/no-such-program`;
    assert.deepStrictEqual({ code: failed?.code, message: failed?.message, data: failed?.data }, {
      code: -32603,
      message: 'Cannot mount MCP server "broken": Cannot connect to MCP server "broken": Cannot ' +
        `spawn "${program}": Failed to spawn '${program}': No such file or directory (os error 2)`,
      data: { name: "broken" },
    });
  } finally {
    connection.close();
    await stack.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});
