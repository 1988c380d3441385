/**
 * Subagents over a real `trt serve`: a client whose token is granted `p*` connects to the parent `p` and to its
 * child `p.sub-1` while the child runs, and sees both logs live; a token granted `p*` reaches no other agent.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { type Frame, within, WsClient } from "./_clients.ts";
import { serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const TOKEN = "parent-and-children-token-0123";

const eventOf = (frame: Frame): SessionEvent | undefined =>
  frame.type === "event" ? frame.event as SessionEvent : undefined;

const typesOf = (frames: readonly Frame[]): string[] =>
  frames.flatMap((frame) => {
    const event = eventOf(frame);
    return event === undefined ? [] : [`${event.seq} ${event.type}`];
  });

const turnEnded = (frame: Frame): boolean => eventOf(frame)?.type === "turn/end";

Deno.test("a client granted p* watches p and its running child p.sub-1 live over trt serve", async () => {
  await using model = await fakeOpenRouter();
  model.script(
    // p: delegate.
    sseResponse(toolCallTurn([{
      id: "t1",
      name: "Task",
      args: {
        description: "Count files",
        prompt: "Count the files",
        subagent_type: "general-purpose",
      },
    }])),
    // p.sub-1: the response stays open with nothing but a comment: the child runs until it is cancelled.
    { body: ": OPENROUTER PROCESSING\n\n", end: "hold" },
    // p again, after the child's result.
    sseResponse(textTurn("The child was stopped.")),
  );
  await using tree = await writeTree({
    "serve.yml": [
      "rows:",
      "  - id: sandbox",
      "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
      "  - id: llm.main",
      `    config: { model: test/model, base_url: "${model.url}", api_key: sk-or-test-key, max_retries: 0 }`,
      "  - id: titles",
      "    config: { auto: false }",
      "  - id: tools.allow",
      "    config: { allow: [Task] }",
      "  - id: interfaces.ws",
      `    config: { port: 0, tokens: [{ token: ${TOKEN}, agents: ["p*"] }] }`,
      "",
    ].join("\n"),
  });
  const served = await serve(tree.dir, [tree.path("serve.yml")]);
  const url = (agent: string): string => `ws://127.0.0.1:${served.port}/v1/agents/${agent}/stream`;
  const clients: WsClient[] = [];
  try {
    // The grant is p*: another agent is the same 401 as a wrong token.
    await assert.rejects(WsClient.open(url("q"), { token: TOKEN }), /Cannot connect/);

    const parent = await WsClient.open(url("p"), { token: TOKEN });
    clients.push(parent);
    await parent.next();
    parent.send({ type: "subscribe", from_seq: 1, ref: "s" });
    parent.send({ type: "message", content: "How many files?", ref: "m" });
    // The child's request is open: it is running now.
    await model.waitForRequests(2, { timeoutMs: 30_000 });
    const child = await WsClient.open(url("p.sub-1"), { token: TOKEN });
    clients.push(child);
    const hello = await child.next();
    assert.deepStrictEqual([hello.type, hello.agent_id, hello.session_id], [
      "hello",
      "p.sub-1",
      "p.sub-1",
    ]);
    child.send({ type: "subscribe", from_seq: 1, ref: "s" });
    await child.readUntil((frame) => eventOf(frame)?.type === "user/message", 30_000);
    // The child is watched while it runs; stopping it from its own connection ends its turn, and the parent's
    // Task call answers with the cancellation and the parent finishes its turn.
    child.send({ type: "cancel", reason: "enough", ref: "c" });
    await within(child.readUntil(turnEnded, 30_000), 30_000, "the child's turn/end");
    await within(parent.readUntil(turnEnded, 30_000), 30_000, "the parent's turn/end");
    assert.deepStrictEqual(typesOf(child.frames), [
      "1 session/created",
      "2 policy/updated",
      "3 turn/start",
      "4 step/start",
      "5 user/message",
      "6 step/end",
      "7 turn/end",
    ]);
    const childEvents = child.frames.flatMap((frame) => eventOf(frame) ?? []);
    // Lineage in session/created (beside the environment the prompt row records for every session).
    const { environment, ...meta } =
      (childEvents[0]!.payload as { meta: Record<string, unknown> }).meta;
    assert.equal(typeof environment, "object");
    assert.deepStrictEqual(meta, {
      agent_id: "p.sub-1",
      unattended: true,
      subagent: {
        parent_session_id: "p",
        parent_agent_id: "p",
        call_id: "t1",
        type: "general-purpose",
        description: "Count files",
        depth: 1,
      },
    });
    assert.deepStrictEqual(childEvents.at(-1)!.payload, {
      status: "cancelled",
      error: { code: "Cancelled", message: "enough" },
    });
    assert.deepStrictEqual(typesOf(parent.frames), [
      "1 session/created",
      "2 input/queued",
      "3 turn/start",
      "4 step/start",
      "5 user/message",
      "6 assistant/message",
      "7 tool/call",
      "8 tool/result",
      "9 step/end",
      "10 step/start",
      "11 assistant/chunk",
      "12 assistant/message",
      "13 step/end",
      "14 turn/end",
    ]);
    const result = parent.frames.flatMap((frame) => eventOf(frame) ?? []).find((event) =>
      event.type === "tool/result"
    )!;
    assert.deepStrictEqual(
      [
        (result.payload as { is_error: boolean }).is_error,
        (result.payload as { details: { status: string; session_id: string } }).details.status,
        (result.payload as { details: { session_id: string } }).details.session_id,
      ],
      [true, "cancelled", "p.sub-1"],
    );
  } finally {
    for (const client of clients) await client.close();
    const { code } = await served.stop();
    assert.equal(code, 0);
  }
});
