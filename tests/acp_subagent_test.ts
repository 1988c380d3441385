/**
 * The ACP-client subagent provider with `trt acp` itself as the external agent: a subagent type runs a real
 * `trt acp` child process (spawned through the subprocess seam and its sandbox), Terret drives it as an ACP client,
 * and the child's `session/request_permission` is answered by the child's policy — allowed where the child's allow
 * list and the approval rules admit the call, rejected where the parent's policy never gave the child the tool.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { SubagentsService } from "@terret/core/subagents";
import { noneSandboxPlugin, subprocessPlugin, workspacePlugin } from "@terret/exec";
import { acpSubagentsPlugin } from "@terret/acp";
import {
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { writeTree } from "./fixtures/composition/tree.ts";

const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));

const task = (id: string, type: string, prompt: string) => ({
  id,
  name: "Task",
  args: { description: "Write a file", prompt, subagent_type: type },
});

Deno.test("a subagent type running trt acp: its permission requests are answered by the child's policy", async () => {
  await using model = await fakeOpenRouter();
  await using tree = await writeTree({ "work/.keep": "" });
  const work = await Deno.realPath(tree.path("work"));
  const fileA = `${work}/a.txt`;
  const fileB = `${work}/b.txt`;
  // The external agent's model: each child asks to Write its file, then answers.
  model.script(
    sseResponse(
      toolCallTurn([{ id: "w1", name: "Write", args: { file_path: fileA, content: "A" } }]),
    ),
    sseResponse(textTurn("Wrote a.txt.")),
    sseResponse(
      toolCallTurn([{ id: "w2", name: "Write", args: { file_path: fileB, content: "B" } }]),
    ),
    sseResponse(textTurn("Write was rejected.")),
  );
  await Deno.writeTextFile(
    tree.path("external.yml"),
    [
      "rows:",
      "  - id: workspace",
      `    config: { dirs: ["${work}"] }`,
      "  - id: llm.main",
      `    config: { model: test/model, base_url: "${model.url}", api_key: sk-test, max_retries: 0 }`,
      "  - id: sandbox",
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      "  - id: titles",
      "    config: { auto: false }",
      // The external agent may Write, and asks its client (Terret) for every call.
      "  - id: tools.allow",
      "    config: { allow: [Write] }",
      "",
    ].join("\n"),
  );
  const command = [
    Deno.execPath(),
    "run",
    "-A",
    MAIN,
    "acp",
    "--home",
    tree.path("external-home"),
    "--patch",
    tree.path("external.yml"),
  ];
  const acpType = (name: string, tools: string[]) => ({
    name,
    description: `Writes files (${name})`,
    tools,
    provider: "acp",
    command,
  });
  const parent = scriptedAdapter([
    toolCallsReply([task("t1", "writer", "Write a.txt")]),
    toolCallsReply([task("t2", "reader", "Write b.txt")]),
    textReply("One written, one refused."),
  ]);
  await using stack = await createAgentStack({
    adapter: parent,
    // The host's floor; the approval rules allow Write calls without asking.
    allow: ["Task", "Write", "Read"],
    approvals: { allow: ["Write"] },
    rows: [
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [work] } },
      { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
      {
        id: "subprocess",
        plugin: subprocessPlugin,
        config: { inherit_env: ["PATH", "HOME", "DENO_DIR"], env: { OPENROUTER_API_KEY: "" } },
      },
      {
        id: "subagents",
        plugin: SubagentsService,
        config: { types: [acpType("writer", ["Write"]), acpType("reader", ["Read"])] },
      },
      { id: "subagents.acp", plugin: acpSubagentsPlugin, config: {} },
    ],
  });
  const agent = await stack.agents.create({ agent_id: "p" });
  agent.send("Write both files");
  await agent.idle();

  // The writer's Write was allowed by its policy (Write on its allow list, an allow rule): the file exists.
  assert.equal(await Deno.readTextFile(fileA), "A");
  // The reader was given Read only: its Write was rejected and nothing was written.
  await assert.rejects(Deno.stat(fileB), Deno.errors.NotFound);

  const shapes = async (id: string) =>
    eventShapes(await stack.sessions.read(id)).map(({ type, payload }) => [type, payload]);
  const meta = (id: string, type: string, call: string) => ({
    meta: {
      agent_id: id,
      unattended: true,
      subagent: {
        parent_session_id: "p",
        parent_agent_id: "p",
        call_id: call,
        type,
        description: "Write a file",
        depth: 1,
      },
    },
  });
  const writer = await shapes("p.sub-1");
  assert.deepStrictEqual(writer.map(([type]) => type), [
    "session/created",
    "policy/updated",
    "turn/start",
    "user/message",
    "assistant/message",
    "turn/end",
  ]);
  assert.deepStrictEqual(writer[0]![1], meta("p.sub-1", "writer", "t1"));
  assert.deepStrictEqual(writer[1]![1], { allow: ["Write"], ceiling: true });
  assert.deepStrictEqual(writer.slice(2).map(([, payload]) => payload), [
    { agent_id: "p.sub-1", provider: "acp" },
    { content: "Write a.txt" },
    { parts: [{ type: "text", text: "Wrote a.txt." }] },
    { status: "completed" },
  ]);
  const reader = await shapes("p.sub-2");
  assert.deepStrictEqual(reader[1]![1], { allow: ["Read"], ceiling: true });
  assert.deepStrictEqual(reader.slice(2).map(([, payload]) => payload), [
    { agent_id: "p.sub-2", provider: "acp" },
    { content: "Write b.txt" },
    { parts: [{ type: "text", text: "Write was rejected." }] },
    { status: "completed" },
  ]);
  // The external agent saw the rejection as its tool's result.
  const fourth = model.requests[3]!.body as { messages: { role: string; content: unknown }[] };
  const toolMessage = fourth.messages.find((message) => message.role === "tool")!;
  assert.match(String(toolMessage.content), /denied|reject/i);
  // The parent got both children's texts as its Task results.
  const results = (await stack.sessions.read("p")).filter((event) => event.type === "tool/result")
    .map((event) => (event.payload as { is_error: boolean; details: unknown }).details);
  assert.deepStrictEqual(
    results.map((details) => (details as { status: string; session_id: string })),
    [
      {
        status: "completed",
        session_id: "p.sub-1",
        subagent_type: "writer",
        usage: {
          steps: 0,
          unknown_steps: 0,
          utility_calls: 0,
          input_tokens: 0,
          output_tokens: 0,
          cached_tokens: 0,
          cost: null,
        },
      },
      {
        status: "completed",
        session_id: "p.sub-2",
        subagent_type: "reader",
        usage: {
          steps: 0,
          unknown_steps: 0,
          utility_calls: 0,
          input_tokens: 0,
          output_tokens: 0,
          cached_tokens: 0,
          cost: null,
        },
      },
    ],
  );
});
