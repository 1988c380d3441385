import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import {
  createAgentStack,
  scriptedAdapter,
  type ScriptedTool,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import type { ScriptItem } from "@terret/core/testing";
import { serveAcp } from "./acp_server.ts";
import { ACP_MODES } from "./modes.ts";

const ROOT = "/work/project";

type Update = acp.SessionUpdate;

/** A client and the agent side joined by two NDJSON byte pipes; every update the client receives is recorded. */
function connectPair(stack: { sessions: never; agents: never } | Parameters<typeof serveAcp>[1]) {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  const server = serveAcp(acp.ndJsonStream(down.writable, up.readable), stack as never);
  const updates: { sessionId: string; update: Update }[] = [];
  const app = acp.client({ name: "test-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push({ sessionId: params.sessionId, update: params.update });
    });
  const connection = app.connect(acp.ndJsonStream(up.writable, down.readable));
  return { server, connection, agent: connection.agent, updates };
}

async function boot(responses: ScriptItem[][], tools: ScriptedTool[] = [], allow: string[] = []) {
  const stack = await createAgentStack({ adapter: scriptedAdapter(responses), allow });
  for (const tool of tools) stack.tools.register(stack.ctx, tool.definition);
  return stack;
}

/** An update reduced to what a sequence pins: its kind and its text or status. */
function brief(update: Update): string {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
    case "agent_message_chunk":
    case "agent_thought_chunk":
      return `${update.sessionUpdate} ${update.content.type === "text" ? update.content.text : ""}`;
    case "tool_call":
      return `tool_call ${update.toolCallId} ${update.kind} ${update.status}`;
    case "tool_call_update":
      return `tool_call_update ${update.toolCallId} ${update.status}`;
    default:
      return update.sessionUpdate;
  }
}

async function initialize(agent: acp.ClientContext) {
  return await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "test-client", version: "0.0.1" },
  });
}

Deno.test("initialize advertises what is served; a plain turn streams the user message and the chunks, then end_turn", async () => {
  await using stack = await boot([textReply(["Hel", "lo"])]);
  const { connection, agent, updates } = connectPair({ ...stack, roots: [ROOT] });
  try {
    assert.deepStrictEqual(await initialize(agent), {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { close: {} },
      },
      agentInfo: { name: "terret", title: "Terret", version: "0.1.0" },
      authMethods: [],
    });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: `${ROOT}/sub`,
      mcpServers: [],
    });
    // The ACP session is the durable session, driven by the agent of the same id.
    assert.equal(stack.agents.get(sessionId)?.session_id, sessionId);
    const answer = await agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    assert.deepStrictEqual(answer, { stopReason: "end_turn" });
    assert.deepStrictEqual(updates.map(({ update }) => brief(update)), [
      "user_message_chunk hi",
      "agent_message_chunk Hel",
      "agent_message_chunk lo",
    ]);
    assert.ok(updates.every((entry) => entry.sessionId === sessionId));
  } finally {
    connection.close();
  }
});

Deno.test("a tool turn streams Read then Edit with kinds, locations and a diff, a denied call fails, and session/load replays the same transcript", async () => {
  const read = scriptedTool("Read", { kind: "read", reply: () => "one\ntwo\n" });
  const edit = scriptedTool("Edit", { kind: "edit", reply: () => "edited" });
  const bash = scriptedTool("Bash", { kind: "execute" });
  const file = `${ROOT}/a.txt`;
  await using stack = await boot(
    [
      toolCallsReply([{ id: "c1", name: "Read", args: { file_path: file } }]),
      toolCallsReply([{
        id: "c2",
        name: "Edit",
        args: { file_path: file, old_string: "two", new_string: "three" },
      }]),
      toolCallsReply([{ id: "c3", name: "Bash", args: { command: "rm -rf /" } }]),
      textReply("done"),
    ],
    [read, edit, bash],
    ["Read", "Edit"],
  );
  const live = connectPair({ ...stack, roots: [ROOT] });
  let sessionId = "";
  try {
    await initialize(live.agent);
    ({ sessionId } = await live.agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    }));
    const answer = await live.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "fix a.txt" }],
    });
    assert.deepStrictEqual(answer, { stopReason: "end_turn" });
    assert.deepStrictEqual(live.updates.map(({ update }) => brief(update)), [
      "user_message_chunk fix a.txt",
      "tool_call c1 read in_progress",
      "tool_call_update c1 completed",
      "tool_call c2 edit in_progress",
      "tool_call_update c2 completed",
      "tool_call c3 execute in_progress",
      "tool_call_update c3 failed",
      "agent_message_chunk done",
    ]);
    const editCall = live.updates[3]!.update;
    assert.equal(editCall.sessionUpdate, "tool_call");
    if (editCall.sessionUpdate === "tool_call") {
      assert.deepStrictEqual(editCall.locations, [{ path: file }]);
      assert.deepStrictEqual(editCall.content, [
        { type: "diff", path: file, oldText: "two", newText: "three" },
      ]);
    }
    assert.equal(bash.calls.length, 0, "the denied call never ran");
  } finally {
    live.connection.close();
  }
  const again = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(again.agent);
    assert.deepStrictEqual(
      await again.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: ROOT,
        mcpServers: [],
      }),
      { modes: { currentModeId: "ask", availableModes: [...ACP_MODES] } },
    );
    assert.deepStrictEqual(again.updates, live.updates);
  } finally {
    again.connection.close();
  }
});

Deno.test("session/cancel mid-tool answers cancelled and reports the running call as failed", async () => {
  const slow = scriptedTool("Read", { held: true, kind: "read" });
  await using stack = await boot(
    [
      toolCallsReply([{ id: "c1", name: "Read", args: { file_path: `${ROOT}/a.txt` } }]),
    ],
    [slow],
    ["Read"],
  );
  const { connection, agent, updates } = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    });
    const turn = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "read" }],
    });
    await slow.started(1);
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.deepStrictEqual(await turn, { stopReason: "cancelled" });
    assert.deepStrictEqual(updates.map(({ update }) => brief(update)), [
      "user_message_chunk read",
      "tool_call c1 read in_progress",
      "tool_call_update c1 failed",
    ]);
  } finally {
    connection.close();
  }
});

Deno.test("bad requests get clear errors and the connection keeps serving", async () => {
  const slow = scriptedTool("Read", { held: true, kind: "read" });
  await using stack = await boot(
    [
      toolCallsReply([{ id: "c1", name: "Read", args: { file_path: `${ROOT}/a.txt` } }]),
      textReply("ok"),
    ],
    [slow],
    ["Read"],
  );
  const { connection, agent } = connectPair({ ...stack, roots: [ROOT] });
  const failure = async (request: Promise<unknown>) => {
    try {
      await request;
    } catch (error) {
      const { code, message, data } = error as acp.RequestError;
      return { code, message, data };
    }
    assert.fail("the request should have failed");
  };
  try {
    await initialize(agent);
    assert.deepStrictEqual(
      await failure(agent.request(acp.methods.agent.session.new, { cwd: "/etc", mcpServers: [] })),
      {
        code: -32602,
        message: 'Cannot open a session in "/etc": cwd must be an absolute path inside a granted ' +
          `directory ("${ROOT}")`,
        data: { field: "cwd", cwd: "/etc", roots: [ROOT] },
      },
    );
    assert.deepStrictEqual(
      await failure(agent.request(acp.methods.agent.session.prompt, {
        sessionId: "nope",
        prompt: [{ type: "text", text: "hi" }],
      })),
      {
        code: -32002,
        message: 'Cannot use session "nope": no such session',
        data: { sessionId: "nope" },
      },
    );
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    });
    const turn = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "first" }],
    });
    await slow.started(1);
    assert.deepStrictEqual(
      await failure(agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "second" }],
      })),
      {
        code: -32602,
        message:
          `Cannot prompt session "${sessionId}": a prompt is already running (wait for its answer ` +
          "or cancel it)",
        data: { field: "sessionId", sessionId },
      },
    );
    slow.release();
    assert.deepStrictEqual(await turn, { stopReason: "end_turn" });
    // The refused prompt queued nothing: the log holds one user message.
    const users = (await stack.sessions.read(sessionId)).filter((event) =>
      event.type === "user/message"
    );
    assert.deepStrictEqual(users.map((event) => event.payload), [{
      content: [{ type: "text", text: "first" }],
    }]);
  } finally {
    connection.close();
  }
});

Deno.test("a turn that runs out of steps answers max_turn_requests", async () => {
  const read = scriptedTool("Read");
  const stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([{ id: "c1", name: "Read", args: { file_path: `${ROOT}/a.txt` } }]),
    ]),
    allow: ["Read"],
    maxSteps: 1,
  });
  await using _stack = stack;
  stack.tools.register(stack.ctx, read.definition);
  const { connection, agent } = connectPair({ ...stack, roots: [ROOT] });
  try {
    await initialize(agent);
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: ROOT,
      mcpServers: [],
    });
    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "loop" }],
      }),
      { stopReason: "max_turn_requests" },
    );
  } finally {
    connection.close();
  }
});
