/**
 * The loop is replaceable (plan §6.4): a different, minimal driver mounted in place of the default one under the
 * `loop` key runs a turn end to end over the same sessions, tools, allow list and model adapter, none of them
 * changed. This driver has no waterfalls, no barrier and no chunks: it claims everything at once, runs calls one by
 * one, and still keeps the log the single source of the model's context.
 */
import assert from "node:assert/strict";
import { definePlugin } from "@terret/hames";
import { type Driver, Llm, LoopKey, type Part, SessionsKey, ToolsKey } from "@terret/core";
import type { ToolCallPart } from "@terret/core/llm";
import type { TurnOutcome, TurnRun } from "@terret/core/agents";
import {
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";

/** A minimal driver: the whole turn in one function. */
const minimalDriver = definePlugin({
  name: "minimal-driver",
  inject: [SessionsKey],
  provides: [LoopKey],
  apply(ctx) {
    const sessions = ctx.get(SessionsKey);
    const driver: Driver = {
      async runTurn(run: TurnRun): Promise<TurnOutcome> {
        const { agent } = run;
        const append = (type: string, payload: unknown) =>
          sessions.append(agent.session_id, { type, payload });
        await append("turn/start", { driver: "minimal" });
        for (const item of run.claim()) {
          await append(item.kind === "message" ? "user/message" : "context/injected", {
            content: item.content,
          });
        }
        const tools = agent.ctx.get(ToolsKey);
        for (let step = 1;; step++) {
          const messages = await sessions.deriveMessages(agent.session_id);
          await sessions.assertInvariant(messages, agent.session_id);
          const offered = await tools.offered({ ctx: agent.ctx, session_id: agent.session_id });
          const parts: Part[] = [];
          for await (
            const event of agent.ctx.get(Llm).stream({ messages, tools: offered }, {
              ctx: agent.ctx,
              signal: run.signal,
            })
          ) {
            if (event.type === "text_delta") parts.push({ type: "text", text: event.text });
            if (event.type === "tool_call_end") {
              parts.push({ type: "tool_call", id: event.id, name: event.name, args: event.args! });
            }
          }
          await append("assistant/message", { parts });
          const calls = parts.filter((part): part is ToolCallPart => part.type === "tool_call");
          for (const call of calls) {
            await append(
              "tool/result",
              await tools.execute(call, {
                ctx: agent.ctx,
                session_id: agent.session_id,
                agent_id: agent.id,
              }),
            );
          }
          if (calls.length === 0) {
            await append("turn/end", { status: "completed" });
            return { status: "completed", steps: step, closed: true };
          }
        }
      },
    };
    ctx.provide(LoopKey, driver);
  },
});

Deno.test("a different driver mounted as loop runs a tool turn over the same sessions, tools and adapter", async () => {
  const adapter = scriptedAdapter([
    toolCallsReply([{ id: "c1", name: "echo", args: { text: "hi" } }]),
    toolCallsReply([{ id: "c2", name: "secret", args: {} }]),
    textReply(["Echoed ", "hi."]),
  ]);
  await using stack = await createAgentStack({ adapter, allow: ["echo"], driver: minimalDriver });
  const echo = scriptedTool("echo");
  const secret = scriptedTool("secret");
  stack.tools.register(stack.ctx, echo.definition);
  stack.tools.register(stack.ctx, secret.definition);
  const agent = await stack.agents.ensure("swapped");
  agent.send("Echo hi");
  await agent.idle();
  assert.equal(agent.status, "idle");
  assert.equal(echo.calls.length, 1);
  assert.equal(secret.calls.length, 0);
  assert.deepStrictEqual(eventShapes(await stack.sessions.read("swapped")), [
    { seq: 1, type: "session/created", payload: { meta: { agent_id: "swapped" } } },
    { seq: 2, type: "turn/start", payload: { driver: "minimal" } },
    { seq: 3, type: "user/message", payload: { content: "Echo hi" } },
    {
      seq: 4,
      type: "assistant/message",
      payload: { parts: [{ type: "tool_call", id: "c1", name: "echo", args: { text: "hi" } }] },
    },
    {
      seq: 5,
      type: "tool/result",
      payload: { id: "c1", name: "echo", content: 'echo ok: {"text":"hi"}', is_error: false },
    },
    {
      seq: 6,
      type: "assistant/message",
      payload: { parts: [{ type: "tool_call", id: "c2", name: "secret", args: {} }] },
    },
    {
      seq: 7,
      type: "tool/result",
      payload: {
        id: "c2",
        name: "secret",
        content:
          'Cannot run tool "secret": it is not on the allow list (denied by policy). Do not call ' +
          "it again; use a tool you are allowed to use or continue without it.",
        is_error: true,
      },
    },
    {
      seq: 8,
      type: "assistant/message",
      payload: { parts: [{ type: "text", text: "Echoed " }, { type: "text", text: "hi." }] },
    },
    { seq: 9, type: "turn/end", payload: { status: "completed" } },
  ]);
  assert.deepStrictEqual(
    adapter.requests.map((request) => request.tools?.map((tool) => tool.name)),
    [["echo"], ["echo"], ["echo"]],
  );
  assert.deepStrictEqual(
    adapter.requests[2]!.messages,
    await stack.sessions.deriveMessages("swapped", { upto: 7 }),
  );
});
