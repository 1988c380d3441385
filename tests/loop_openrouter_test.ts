/**
 * End to end through the real OpenRouter adapter (encode, HTTP, SSE parsing, decode) against the fake OpenRouter
 * server on 127.0.0.1: a multi-step tool turn whose every request passes the log invariant and carries exactly the
 * derived history, as the adapter encodes it; and a cancel that closes the in-flight HTTP stream.
 */
import assert from "node:assert/strict";
import { encodeChatRequest } from "@terret/core/llm";
import type { InvariantReport } from "@terret/core/sessions";
import { Llm, LlmStream, type Message, openRouterLlm, SessionsKey } from "@terret/core";
import {
  type AgentStack,
  chunk,
  createAgentStack,
  fakeOpenRouter,
  scriptedTool,
  sse,
  sseResponse,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";

async function withOpenRouter(stack: AgentStack, baseUrl: string): Promise<void> {
  await stack.ctx.plugin(openRouterLlm, {
    model: "test/model",
    base_url: baseUrl,
    api_key: "sk-or-test-key",
    max_retries: 0,
  }).settled();
}

Deno.test("a multi-step tool turn through the real OpenRouter adapter: every request is the derived history", async () => {
  await using server = await fakeOpenRouter();
  server.script(
    sseResponse(toolCallTurn([{ id: "call_1", name: "lookup", args: { city: "Oslo" } }], {
      text: "Let me look.",
    })),
    sseResponse(toolCallTurn([
      { id: "call_2", name: "lookup", args: { city: "Bergen" } },
      { id: "call_3", name: "lookup", args: { city: "Tromsø" } },
    ])),
    sseResponse(textTurn(["Oslo 4°, ", "Bergen 7°, ", "Tromsø -2°."])),
  );
  await using stack = await createAgentStack({ allow: ["lookup"] });
  await withOpenRouter(stack, server.url);
  const lookup = scriptedTool("lookup", { reply: (args) => `${args.city}: fine` });
  stack.tools.register(stack.ctx, lookup.definition);
  // After the loop's own check, re-check each outbound request against the log from inside llm/stream.
  const reports: InvariantReport[] = [];
  const sent: Message[][] = [];
  stack.ctx.on(LlmStream, async function* (payload, next) {
    sent.push([...payload.request.messages]);
    reports.push(await stack.ctx.get(SessionsKey).assertInvariant(payload.request.messages, "e2e"));
    yield* next();
  });
  const agent = await stack.agents.create({
    agent_id: "e2e",
    meta: { persona: "You report weather." },
  });
  agent.send("Weather in Oslo, Bergen and Tromsø?");
  await agent.idle();
  assert.equal(agent.status, "idle");
  assert.equal(server.requests.length, 3);
  assert.deepStrictEqual(reports.map((report) => report.ok), [true, true, true]);
  const events = await stack.sessions.read("e2e");
  const answers = events.filter((event) => event.type === "assistant/message");
  for (const [i, request] of server.requests.entries()) {
    // The request was built from the log as it stood before the step's answer.
    const upto = answers[i]!.seq - 1;
    const derived = await stack.sessions.deriveMessages("e2e", { upto });
    assert.deepStrictEqual(sent[i], derived);
    const body = request.body as { messages: unknown[]; tools: { function: { name: string } }[] };
    assert.deepStrictEqual(
      body.messages,
      encodeChatRequest({ system: "You report weather.", messages: derived }, {
        model: "test/model",
      }).messages,
    );
    assert.deepStrictEqual(body.tools.map((tool) => tool.function.name), ["lookup"]);
  }
  assert.deepStrictEqual(lookup.calls.map((call) => call.args.city), ["Oslo", "Bergen", "Tromsø"]);
  assert.deepStrictEqual(
    events.filter((event) => event.type === "tool/result").map((event) => event.payload),
    [
      { id: "call_1", name: "lookup", content: "Oslo: fine", is_error: false },
      { id: "call_2", name: "lookup", content: "Bergen: fine", is_error: false },
      { id: "call_3", name: "lookup", content: "Tromsø: fine", is_error: false },
    ],
  );
  assert.deepStrictEqual(answers.at(-1)!.payload, {
    parts: [{ type: "text", text: "Oslo 4°, Bergen 7°, Tromsø -2°." }],
  });
  assert.deepStrictEqual(events.at(-2)!.payload, {
    step: 3,
    usage: { input_tokens: 10, output_tokens: 5, cached_tokens: 0, cost: 0 },
    finish_reason: "stop",
  });
  assert.deepStrictEqual(events.at(-1)!.payload, { status: "completed" });
});

Deno.test("a cancel mid-stream closes the in-flight HTTP stream and ends the turn cancelled", async () => {
  await using server = await fakeOpenRouter();
  server.script({
    ...sseResponse(sse(": OPENROUTER PROCESSING", chunk({ role: "assistant", content: "Hel" }))),
    end: "hold",
  });
  await using stack = await createAgentStack({ allow: [] });
  await withOpenRouter(stack, server.url);
  const agent = await stack.agents.ensure("stopme");
  let chunked: () => void = () => {};
  const firstChunk = new Promise<void>((resolve) => chunked = resolve);
  const listening = (async () => {
    const controller = new AbortController();
    for await (const event of stack.sessions.stream("stopme", { signal: controller.signal })) {
      if (event.type === "assistant/chunk") {
        chunked();
        controller.abort();
      }
    }
  })();
  agent.send("Say hello");
  await firstChunk;
  await listening;
  agent.cancel("stop");
  await agent.idle();
  assert.equal(await server.exchanges[0]!.ended, "client_closed");
  const events = await stack.sessions.read("stopme");
  assert.deepStrictEqual(events.slice(4).map((event) => [event.type, event.payload]), [
    ["assistant/chunk", { kind: "text", text: "Hel" }],
    [
      "step/end",
      { step: 1, usage: { input_tokens: 0, output_tokens: 0 }, finish_reason: "cancelled" },
    ],
    ["turn/end", { status: "cancelled", error: { code: "Cancelled", message: "stop" } }],
  ]);
  assert.equal(stack.ctx.get(Llm).roles().join(), "main");
});
