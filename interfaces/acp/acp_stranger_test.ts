/**
 * A stranger client: plain newline-delimited JSON-RPC written by hand (not the ACP SDK) drives the server through
 * initialize, session/new and session/prompt, and sends it bad input; the server answers each and keeps serving.
 */
import assert from "node:assert/strict";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
import { ndJsonStream, serveAcp } from "./mod.ts";

const ROOT = "/work/project";

/** A raw line client over two byte pipes: `send` writes one line, `next` reads the next parsed message. */
function rawClient(options: Parameters<typeof serveAcp>[1]) {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  const connection = serveAcp(ndJsonStream(down.writable, up.readable), options);
  const writer = up.writable.getWriter();
  const encoder = new TextEncoder();
  const lines = down.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<Record<string, unknown>> => {
    while (!buffer.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the server closed its output");
      buffer += value;
    }
    const newline = buffer.indexOf("\n");
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    return JSON.parse(line);
  };
  return {
    connection,
    send: (line: string) => writer.write(encoder.encode(`${line}\n`)),
    next,
  };
}

Deno.test("a hand-written JSON-RPC client runs initialize, new and prompt, and gets an answer to every bad request", async () => {
  await using stack = await createAgentStack({ adapter: scriptedAdapter([textReply("Hi there")]) });
  const client = rawClient({ sessions: stack.sessions, agents: stack.agents, roots: [ROOT] });
  try {
    await client.send("{not json");
    assert.deepStrictEqual(await client.next(), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    await client.send(JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: 1 },
    }));
    const init = await client.next();
    assert.equal(init.id, 1);
    assert.equal((init.result as { protocolVersion: number }).protocolVersion, 1);

    await client.send(
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/frobnicate", params: {} }),
    );
    const unknownMethod = await client.next();
    assert.equal(unknownMethod.id, 2);
    assert.equal((unknownMethod.error as { code: number }).code, -32601);

    await client.send(
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: 7 } }),
    );
    const invalid = await client.next();
    assert.equal(invalid.id, 3);
    const invalidError = invalid.error as { code: number; data?: unknown };
    assert.equal(invalidError.code, -32602);
    // The SDK's schema check names each bad field.
    assert.deepStrictEqual(invalidError.data, {
      _errors: [],
      cwd: { _errors: ["Invalid input: expected string, received number"] },
      mcpServers: { _errors: ["Invalid input: expected array, received undefined"] },
    });

    await client.send(JSON.stringify({
      jsonrpc: "2.0",
      id: 4,
      method: "session/new",
      params: { cwd: "/tmp/elsewhere", mcpServers: [] },
    }));
    const outside = await client.next();
    assert.deepStrictEqual(outside.error, {
      code: -32602,
      message: 'Cannot open a session in "/tmp/elsewhere": cwd must be an absolute path inside a ' +
        `granted directory ("${ROOT}")`,
      data: { field: "cwd", cwd: "/tmp/elsewhere", roots: [ROOT] },
    });

    await client.send(JSON.stringify({
      jsonrpc: "2.0",
      id: 5,
      method: "session/prompt",
      params: { sessionId: "ghost", prompt: [{ type: "text", text: "hi" }] },
    }));
    assert.deepStrictEqual((await client.next()).error, {
      code: -32002,
      message: 'Cannot use session "ghost": no such session',
      data: { sessionId: "ghost" },
    });

    await client.send(JSON.stringify({
      jsonrpc: "2.0",
      id: 6,
      method: "session/new",
      params: { cwd: ROOT, mcpServers: [] },
    }));
    const created = await client.next();
    const sessionId = (created.result as { sessionId: string }).sessionId;
    assert.equal(typeof sessionId, "string");

    await client.send(JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "session/prompt",
      params: { sessionId, prompt: [{ type: "text", text: "hello" }] },
    }));
    const seen: unknown[] = [];
    for (;;) {
      const message = await client.next();
      if (message.id === 7) {
        assert.deepStrictEqual(message.result, { stopReason: "end_turn" });
        break;
      }
      assert.equal(message.method, "session/update");
      seen.push(message.params);
    }
    assert.deepStrictEqual(seen, [
      {
        sessionId,
        update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hello" } },
      },
      {
        sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: "Hi there" },
        },
      },
    ]);
  } finally {
    client.connection.close();
  }
});
