/**
 * The client's `terminal` capability over ACP: with `clientTerminal` on and the client offering terminals, the real
 * Bash tool runs each command in a terminal the client creates (here, a real `bash` child of the test's client),
 * reads its output and exit status, and releases it.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";
import { createBashTool } from "@terret/exec/tools";
import { connectPair, initialize, newSession } from "./acp_client.ts";

interface Terminal {
  readonly child: Deno.ChildProcess;
  output: string;
  done: Promise<Deno.CommandStatus>;
}

/** A client whose terminals are real child processes; every terminal request is recorded. */
function terminals(requests: string[]) {
  const live = new Map<string, Terminal>();
  let next = 0;
  const setup = (app: acp.ClientApp) =>
    app
      .onRequest(acp.methods.client.terminal.create, ({ params }) => {
        const terminalId = `t${++next}`;
        requests.push(
          `create ${terminalId} ${params.command} ${JSON.stringify(params.args)} ${params.cwd}`,
        );
        const child = new Deno.Command(params.command, {
          args: params.args ?? [],
          ...(params.cwd ? { cwd: params.cwd } : {}),
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const terminal: Terminal = { child, output: "", done: Promise.resolve(child.status) };
        const read = async (stream: ReadableStream<Uint8Array>) => {
          for await (const text of stream.pipeThrough(new TextDecoderStream())) {
            terminal.output += text;
          }
        };
        terminal.done = Promise.all([read(child.stdout), read(child.stderr)]).then(() =>
          child.status
        );
        live.set(terminalId, terminal);
        return { terminalId };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
        requests.push(`wait ${params.terminalId}`);
        const status = await live.get(params.terminalId)!.done;
        return { exitCode: status.code };
      })
      .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
        requests.push(`output ${params.terminalId}`);
        const terminal = live.get(params.terminalId)!;
        const status = await terminal.done;
        return { output: terminal.output, truncated: false, exitStatus: { exitCode: status.code } };
      })
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
        requests.push(`kill ${params.terminalId}`);
        live.get(params.terminalId)!.child.kill();
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, ({ params }) => {
        requests.push(`release ${params.terminalId}`);
        live.delete(params.terminalId);
        return {};
      });
  return setup;
}

Deno.test("with clientTerminal, Bash runs each command in a terminal the client creates, and releases it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-acp-term-" }));
  await using stack = await createAgentStack({
    adapter: scriptedAdapter([
      toolCallsReply([{ id: "b1", name: "Bash", args: { command: "echo hi; pwd" } }]),
      toolCallsReply([{ id: "b2", name: "Bash", args: { command: "echo oops >&2; exit 3" } }]),
      textReply("done"),
    ]),
    allow: ["Bash"],
    approvals: { allow: ["Bash"], always_can_be_ruled: true },
  });
  stack.tools.register(
    stack.ctx,
    createBashTool({ approval: "always", default_timeout_ms: 60_000, max_timeout_ms: 600_000 }),
  );
  const requests: string[] = [];
  const { connection, agent, updates } = connectPair(
    { ...stack, roots: [dir], clientTerminal: true },
    terminals(requests),
  );
  try {
    await initialize(agent, { terminal: true });
    const sessionId = await newSession(agent, dir);
    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "run" }],
      }),
      { stopReason: "end_turn" },
    );
    assert.deepStrictEqual(
      updates.flatMap(({ update }) =>
        update.sessionUpdate === "tool_call_update"
          ? [
            `${update.toolCallId} ${update.status}: ${
              (update.content?.at(-1) as { content: { text: string } }).content.text
            }`,
          ]
          : []
      ),
      [`b1 completed: hi\n${dir}`, "b2 failed: oops\n\nExit code 3"],
    );
    assert.deepStrictEqual(requests, [
      `create t1 bash ["-c","echo hi; pwd"] ${dir}`,
      "wait t1",
      "output t1",
      "release t1",
      `create t2 bash ["-c","echo oops >&2; exit 3"] ${dir}`,
      "wait t2",
      "output t2",
      "release t2",
    ]);
  } finally {
    connection.close();
    await Deno.remove(dir, { recursive: true });
  }
});
