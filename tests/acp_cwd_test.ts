/**
 * `cwd` containment through real paths: a symbolic link inside the workspace that leads out is refused, and one
 * outside that leads in is accepted.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack } from "@terret/core/testing";
import { connectPair, initialize, newSession } from "./acp_client.ts";

Deno.test("session/new compares the real cwd with the granted directories", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-acp-cwd-" }));
  const root = `${base}/root`;
  const outside = `${base}/outside`;
  await Deno.mkdir(`${root}/sub`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.symlink(outside, `${root}/escape`);
  await Deno.symlink(`${root}/sub`, `${outside}/into`);
  await using stack = await createAgentStack();
  const { connection, agent } = connectPair({ ...stack, roots: [root] });
  try {
    await initialize(agent);
    const refused = await agent.request(acp.methods.agent.session.new, {
      cwd: `${root}/escape`,
      mcpServers: [],
    }).then(() => undefined, (error: acp.RequestError) => error);
    assert.deepStrictEqual(
      { code: refused?.code, message: refused?.message, data: refused?.data },
      {
        code: -32602,
        message:
          `Cannot open a session in "${root}/escape": cwd must be an absolute path inside a ` +
          `granted directory ("${root}")`,
        data: { field: "cwd", cwd: `${root}/escape`, roots: [root] },
      },
    );
    const sessionId = await newSession(agent, `${outside}/into`);
    assert.equal(stack.agents.get(sessionId)?.session_id, sessionId);
    // A directory that does not exist yet is judged by its real parent.
    await assert.rejects(
      agent.request(acp.methods.agent.session.new, {
        cwd: `${root}/escape/new`,
        mcpServers: [],
      }),
      (error: acp.RequestError) => error.code === -32602,
    );
  } finally {
    connection.close();
    await Deno.remove(base, { recursive: true });
  }
});
