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
import { ACP_MODES } from "./modes.ts";
import { brief, connectPair, initialize, newSession } from "../../tests/acp_client.ts";

const ROOT = "/work/project";

type Update = acp.SessionUpdate;

async function boot(responses: ScriptItem[][], tools: ScriptedTool[] = [], allow: string[] = []) {
  const stack = await createAgentStack({ adapter: scriptedAdapter(responses), allow });
  for (const tool of tools) stack.tools.register(stack.ctx, tool.definition);
  return stack;
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
    const sessionId = await newSession(agent, `${ROOT}/sub`);
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
    sessionId = await newSession(live.agent, ROOT);
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
    const sessionId = await newSession(agent, ROOT);
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
    const sessionId = await newSession(agent, ROOT);
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
