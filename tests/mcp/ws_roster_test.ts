/**
 * The launch workload end to end: an agent whose whole tool roster comes from a stdio MCP server runs a turn over
 * the WebSocket. Booted by `Terret.boot` from a fixture profile (`tests/fixtures/mcp/mcp_only/`: the shipped base
 * bundle, the standard tools disabled, one `mcp.scripted` row spawning the scripted server through the `none`
 * sandbox, the allow list naming one of its tools), with the real OpenRouter adapter against the fake OpenRouter and
 * the real `terret-ws` row on a free port. A real WebSocket client subscribes from seq 1 and sends the message; the
 * model calls two MCP tools in one step (one allowed, one denied), then answers in text.
 *
 * `UPDATE_GOLDEN=1 deno test -A tests/mcp/ws_roster_test.ts` rewrites `tests/golden/ws/turn_mcp_roster.jsonl`.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { createMemoryLogger } from "@terret/hames";
import { type SessionEvent, SessionsKey, ToolsKey } from "@terret/core";
import type { ToolInfo } from "@terret/core/tools";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { WsServiceKey } from "@terret/ws";
import { Terret } from "@terret/terret";
import { type Frame, WsClient } from "../ws/_clients.ts";
import { assertGolden } from "../ws/_golden.ts";
import { DENO, DENO_CHILD_ENV, SCRIPTED, until } from "./_world.ts";

const PROFILE = fileURLToPath(new URL("../fixtures/mcp/mcp_only/", import.meta.url));
const TOKEN = "test-token-all-agents-0123456789";
const AGENT = "mcp-roster";

/** A tool as the server lists it. */
interface ServerTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/**
 * The scripted server's own `tools/list`, asked directly over raw JSON-RPC on a process of its own: the roster the
 * registry must hold, from the source rather than from the client under test.
 */
async function serverTools(): Promise<ServerTool[]> {
  const child = new Deno.Command(DENO, {
    args: ["run", "--no-config", SCRIPTED],
    env: { ...DENO_CHILD_ENV },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const requests = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "roster-probe", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
  ];
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(requests.map((r) => JSON.stringify(r) + "\n").join("")),
  );
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let listed: ServerTool[] | undefined;
  while (listed === undefined) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`The scripted server closed its stdout before answering: ${buffer}`);
    buffer += value;
    const complete = buffer.split("\n");
    buffer = complete.pop()!;
    for (const line of complete) {
      const message = JSON.parse(line) as { id?: number; result?: { tools: ServerTool[] } };
      if (message.id === 2) listed = message.result!.tools;
    }
  }
  await writer.close();
  await lines.cancel();
  await child.status;
  return listed;
}

const isTurnEnd = (frame: Frame): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

/** The type and the payload fields that tell the story, per event. */
function summary(event: SessionEvent): unknown[] {
  const p = event.payload as Record<string, unknown>;
  switch (event.type) {
    case "assistant/message":
      return [event.seq, event.type, p.parts];
    case "tool/call":
      return [event.seq, event.type, p.id, p.name, p.args];
    case "tool/result":
      return [event.seq, event.type, p.id, p.name, p.is_error, p.content];
    case "step/start":
    case "step/end":
      return [event.seq, event.type, p.step];
    case "user/message":
    case "assistant/chunk":
      return [event.seq, event.type, p.content ?? p.text];
    case "turn/end":
      return [event.seq, event.type, p.status];
    default:
      return [event.seq, event.type];
  }
}

Deno.test("an agent whose entire roster comes from a stdio MCP server runs a turn over the WebSocket, the allow list admitting one call and denying another", async () => {
  const listed = await serverTools();
  await using openRouter = await fakeOpenRouter();
  openRouter.script(
    sseResponse(toolCallTurn([
      { id: "call_echo", name: "mcp__scripted__echo", args: { text: "hello over MCP" } },
      { id: "call_crash", name: "mcp__scripted__crash", args: {} },
    ])),
    sseResponse(textTurn("The server echoed: hello over MCP. I may not crash it.")),
  );
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-mcp-ws-" }));
  await Deno.mkdir(`${dir}/work`);
  const logger = createMemoryLogger();
  const env: Record<string, string> = {
    MCP_TEST_WORKSPACE: `${dir}/work`,
    MCP_TEST_OPENROUTER_URL: openRouter.url,
    MCP_TEST_DENO: DENO,
    MCP_TEST_SERVER: SCRIPTED,
  };
  try {
    await using terret = await Terret.boot(PROFILE, {
      home: `${dir}/home`,
      cwd: dir,
      env: { get: (name) => env[name] },
      context: { logger },
    });
    assert.deepStrictEqual(
      terret.rows.map((row) => `${row.composed.id}=${row.composed.plugin}`)
        .filter((row) => /^(tools|mcp)/.test(row)),
      ["tools=terret-tools", "tools.allow=terret-tools-allow", "mcp.scripted=terret-mcp"],
    );

    // The registry's roster is exactly the server's tools: names, descriptions, schemas, default policy metadata.
    const roster = terret.ctx.get(ToolsKey).list().map((info: ToolInfo) => ({
      name: info.name,
      description: info.description,
      parameters: info.parameters,
      mutating: info.mutating,
      concurrency: info.concurrency,
      approval: info.approval,
    }));
    assert.deepStrictEqual(
      roster,
      listed.map((tool) => ({
        name: `mcp__scripted__${tool.name}`,
        description: tool.description,
        parameters: tool.inputSchema,
        mutating: true,
        concurrency: "serial",
        approval: "policy",
      })).sort((a, b) => a.name < b.name ? -1 : 1),
    );
    assert.deepStrictEqual(roster.map((tool) => tool.name), [
      "mcp__scripted__crash",
      "mcp__scripted__echo",
      "mcp__scripted__hang",
      "mcp__scripted__malformed",
      "mcp__scripted__pid",
      "mcp__scripted__set_roster",
      "mcp__scripted__weather",
    ]);

    const port = terret.ctx.get(WsServiceKey).port;
    const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/${AGENT}/stream`, {
      token: TOKEN,
    });
    try {
      assert.equal((await client.next()).type, "hello");
      client.send({ type: "subscribe", from_seq: 1, ref: "s" });
      assert.deepStrictEqual(await client.next(), { type: "ack", ref: "s" });
      client.send({
        type: "message",
        content: "Echo a greeting, then crash the server.",
        ref: "m",
      });
      const frames = await client.readUntil(isTurnEnd);
      assert.deepStrictEqual(frames.filter((frame) => frame.type !== "event"), [
        { type: "ack", ref: "m" },
      ]);
      const received = frames.filter((frame) => frame.type === "event").map((frame) =>
        frame.event as SessionEvent
      );

      const denial =
        'Cannot run tool "mcp__scripted__crash": it is not on the allow list (denied by ' +
        "policy). Do not call it again; use a tool you are allowed to use or continue without it.";
      assert.deepStrictEqual(received.map(summary), [
        [1, "session/created"],
        [2, "input/queued"],
        [3, "turn/start"],
        [4, "step/start", 1],
        [5, "user/message", "Echo a greeting, then crash the server."],
        [6, "assistant/message", [
          {
            type: "tool_call",
            id: "call_echo",
            name: "mcp__scripted__echo",
            args: { text: "hello over MCP" },
          },
          { type: "tool_call", id: "call_crash", name: "mcp__scripted__crash", args: {} },
        ]],
        [7, "tool/call", "call_echo", "mcp__scripted__echo", { text: "hello over MCP" }],
        [8, "tool/result", "call_echo", "mcp__scripted__echo", false, "hello over MCP"],
        [9, "tool/call", "call_crash", "mcp__scripted__crash", {}],
        [10, "tool/result", "call_crash", "mcp__scripted__crash", true, denial],
        [11, "step/end", 1],
        [12, "step/start", 2],
        [13, "assistant/chunk", "The server echoed: hello over MCP. I may not crash it."],
        [14, "assistant/message", [{
          type: "text",
          text: "The server echoed: hello over MCP. I may not crash it.",
        }]],
        [15, "step/end", 2],
        [16, "turn/end", "completed"],
      ]);
      // Every field of every frame: exactly the stored log, and the golden file.
      assert.deepStrictEqual(
        received,
        JSON.parse(JSON.stringify(await terret.ctx.get(SessionsKey).read(AGENT))),
      );
      await assertGolden("turn_mcp_roster", frames.filter((frame) => frame.type === "event"));

      // The model was offered only the allowed tool, and saw both results on its second request.
      const bodies = openRouter.requests.map((request) =>
        request.body as { tools?: { function: { name: string } }[]; messages: unknown[] }
      );
      assert.deepStrictEqual(
        bodies.map((body) => body.tools?.map((tool) => tool.function.name)),
        [["mcp__scripted__echo"], ["mcp__scripted__echo"]],
      );
      assert.deepStrictEqual(
        bodies[1]!.messages.filter((message) => (message as { role: string }).role === "tool"),
        [
          { role: "tool", tool_call_id: "call_echo", content: "hello over MCP" },
          { role: "tool", tool_call_id: "call_crash", content: denial },
        ],
      );
      // The server saw exactly one call (its stderr, which arrives on a pipe of its own, says so): the denied one
      // never left the registry.
      const serverCalls = (): unknown[] =>
        logger.records.filter((record) =>
          record.message === 'MCP server "scripted" says' &&
          String(record.fields.line).startsWith("call ")
        ).map((record) => record.fields.line);
      await until("the server's stderr to report the echo call", () => serverCalls().length > 0);
      assert.deepStrictEqual(serverCalls(), ["call echo"]);
    } finally {
      await client.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
