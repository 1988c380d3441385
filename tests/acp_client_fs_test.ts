/**
 * The client's `fs` capability over ACP: with `clientFs` on and the client offering `fs.readTextFile` and
 * `fs.writeTextFile`, the real Read, Write and Edit tools read the editor's unsaved buffer and write through the
 * editor; a path outside the workspace is refused before any request reaches the client; with the row's option off
 * the client is never asked.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";
import type { ScriptItem } from "@terret/core/testing";
import { fsPlugin, workspacePlugin } from "@terret/exec";
import { createEditTool, createReadTool, createWriteTool } from "@terret/exec/tools";
import { connectPair, initialize, newSession } from "./acp_client.ts";

async function world(script: (dir: string) => ScriptItem[][]) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-acp-fs-" }));
  await Deno.writeTextFile(`${dir}/a.txt`, "disk text\n");
  const stack = await createAgentStack({
    adapter: scriptedAdapter(script(dir)),
    allow: ["Read", "Write", "Edit"],
    approvals: { allow: ["Write", "Edit"] },
    rows: [
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
      { id: "fs", plugin: fsPlugin, config: {} },
    ],
  });
  stack.tools.register(stack.ctx, createReadTool());
  stack.tools.register(stack.ctx, createWriteTool());
  stack.tools.register(stack.ctx, createEditTool());
  return {
    dir,
    stack,
    async [Symbol.asyncDispose]() {
      await stack.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A client whose editor holds `buffers` (path → text) and records every fs request. */
function editor(buffers: Map<string, string>, requests: string[]) {
  return (app: acp.ClientApp) =>
    app
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        requests.push(`read ${params.path}`);
        const text = buffers.get(params.path);
        if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
        return { content: text };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        requests.push(`write ${params.path} ${JSON.stringify(params.content)}`);
        buffers.set(params.path, params.content);
        return {};
      });
}

function results(updates: { update: acp.SessionUpdate }[]): string[] {
  return updates.flatMap(({ update }) =>
    update.sessionUpdate === "tool_call_update"
      ? [
        `${update.toolCallId} ${update.status}: ${
          (update.content?.at(-1) as { content: { text: string } }).content.text
        }`,
      ]
      : []
  );
}

const FS = { readTextFile: true, writeTextFile: true };

Deno.test("with clientFs, Read sees the editor's unsaved buffer, Edit and Write go through the editor, and an outside path never reaches it", async () => {
  await using w = await world((root) => [
    toolCallsReply([{ id: "r1", name: "Read", args: { file_path: `${root}/a.txt` } }]),
    toolCallsReply([{
      id: "e1",
      name: "Edit",
      args: { file_path: `${root}/a.txt`, old_string: "unsaved", new_string: "edited" },
    }]),
    toolCallsReply([{
      id: "w1",
      name: "Write",
      args: { file_path: `${root}/b.txt`, content: "new file" },
    }]),
    toolCallsReply([{ id: "r2", name: "Read", args: { file_path: "/etc/hostname" } }]),
    textReply("done"),
  ]);
  const dir = w.dir;
  const buffers = new Map([[`${dir}/a.txt`, "unsaved text\n"]]);
  const requests: string[] = [];
  const { connection, agent, updates } = connectPair(
    { ...w.stack, roots: [dir], clientFs: true },
    editor(buffers, requests),
  );
  try {
    await initialize(agent, { fs: FS });
    const sessionId = await newSession(agent, dir);
    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      }),
      { stopReason: "end_turn" },
    );
    assert.deepStrictEqual(results(updates), [
      "r1 completed:      1\tunsaved text",
      `e1 completed: Replaced 1 occurrence in ${dir}/a.txt`,
      `w1 completed: Created ${dir}/b.txt (8 bytes)`,
      'r2 failed: Tool "Read" failed: Cannot stat "/etc/hostname": outside the granted workspaces ' +
      `(the granted workspace is ${dir})`,
    ]);
    // The std tools declare their kinds; the calls carry them.
    assert.deepStrictEqual(
      updates.flatMap(({ update }) =>
        update.sessionUpdate === "tool_call" ? [`${update.toolCallId} ${update.kind}`] : []
      ),
      ["r1 read", "e1 edit", "w1 edit", "r2 read"],
    );
    assert.deepStrictEqual(requests, [
      `read ${dir}/a.txt`,
      `read ${dir}/a.txt`,
      `write ${dir}/a.txt "edited text\\n"`,
      `write ${dir}/b.txt "new file"`,
    ]);
    assert.deepStrictEqual([...buffers], [
      [`${dir}/a.txt`, "edited text\n"],
      [`${dir}/b.txt`, "new file"],
    ]);
    // The disk is the editor's to save: nothing was written there.
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), "disk text\n");
    await assert.rejects(Deno.stat(`${dir}/b.txt`), Deno.errors.NotFound);
  } finally {
    connection.close();
  }
});

Deno.test("without clientFs (the default) the client's fs methods are never asked, even when offered", async () => {
  await using w = await world((root) => [
    toolCallsReply([{ id: "r1", name: "Read", args: { file_path: `${root}/a.txt` } }]),
    textReply("done"),
  ]);
  const buffers = new Map([[`${w.dir}/a.txt`, "unsaved text\n"]]);
  const requests: string[] = [];
  const { connection, agent, updates } = connectPair(
    { ...w.stack, roots: [w.dir] },
    editor(buffers, requests),
  );
  try {
    await initialize(agent, { fs: FS });
    const sessionId = await newSession(agent, w.dir);
    await agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "go" }],
    });
    assert.deepStrictEqual(results(updates), ["r1 completed:      1\tdisk text"]);
    assert.deepStrictEqual(requests, []);
  } finally {
    connection.close();
  }
});
