/**
 * A 300-turn session against the fake OpenRouter server (real HTTP, real SSE bytes, the real adapter) with a small
 * context window: compaction keeps every request under the window, and after the first compaction the model always
 * sees the latest summary, then the recent turns, ending with the current question.
 */
import assert from "node:assert/strict";
import { CompactionService, type LlmRequest, LlmStream, openRouterLlm } from "@terret/core";
import { SUMMARY_INSTRUCTIONS } from "@terret/core/compaction";
import { estimateTokens } from "@terret/core/llm";
import {
  chunk,
  createAgentStack,
  fakeOpenRouter,
  type ReceivedRequest,
  sse,
  sseResponse,
  usageChunk,
} from "@terret/core/testing";

const TURNS = 300;
const WINDOW = 1_000;
const FILLER = "the quick brown fox jumps over the lazy dog ".repeat(5).trim();

function reply(text: string): ReturnType<typeof sseResponse> {
  return sseResponse(sse(
    chunk({ role: "assistant", content: "" }),
    ...text.match(/.{1,40}/gs)!.map((piece) => chunk({ content: piece })),
    chunk({}, { finish_reason: "stop" }),
    usageChunk({ prompt_tokens: 100, completion_tokens: 50 }),
    "[DONE]",
  ));
}

Deno.test("300 turns with a 1,000-token window: every request fits, and the model sees the summary and the recent turns", async () => {
  await using server = await fakeOpenRouter();
  let summaries = 0;
  let answers = 0;
  const respond = (request: ReceivedRequest) => {
    const body = request.body as { messages: { role: string; content: unknown }[] };
    if (body.messages[0]?.role === "system" && body.messages[0].content === SUMMARY_INSTRUCTIONS) {
      return reply(`Summary ${++summaries}: the user asked numbered questions; all were answered.`);
    }
    return reply(`Answer ${++answers}: ${FILLER}`);
  };
  server.script(...Array.from({ length: TURNS * 2 }, () => respond));
  await using stack = await createAgentStack({});
  await stack.ctx.plugin(openRouterLlm, {
    model: "test/model",
    base_url: server.url,
    api_key: "sk-test",
    max_retries: 0,
    capabilities: { max_context_tokens: WINDOW },
  }).settled();
  stack.ctx.plugin(CompactionService, {}, { id: "compaction" });
  await stack.ctx.idle();
  const sent: LlmRequest[] = [];
  stack.ctx.on(LlmStream, (payload, next) => {
    sent.push(payload.request);
    return next(payload);
  });
  const agent = await stack.agents.ensure("long");
  for (let turn = 1; turn <= TURNS; turn++) {
    agent.send(`Question ${turn}: ${FILLER}`);
    await agent.idle();
  }
  const events = await stack.sessions.read("long");
  const ends = events.filter((event) => event.type === "turn/end");
  assert.equal(ends.length, TURNS);
  assert.deepStrictEqual(
    ends.filter((event) => (event.payload as { status: string }).status !== "completed"),
    [],
  );
  const compactions = events.filter((event) => event.type === "session/compacted");
  assert.equal(compactions.length, summaries);
  assert.ok(summaries >= 30, `only ${summaries} compactions in ${TURNS} turns`);
  for (const request of sent) {
    const tokens = estimateTokens(request);
    assert.ok(
      tokens <= WINDOW,
      `a request of ~${tokens} tokens exceeds the ${WINDOW}-token window`,
    );
  }
  const main = sent.filter((request) => request.system !== SUMMARY_INSTRUCTIONS);
  assert.equal(main.length, TURNS);
  let latest: string | undefined;
  let summarized = 0;
  let question = 0;
  for (const request of sent) {
    if (request.system === SUMMARY_INSTRUCTIONS) {
      latest = (compactions[summarized++]!.payload as { summary: string }).summary;
      continue;
    }
    question++;
    const first = request.messages[0]!.parts[0] as { text: string };
    const last = request.messages.at(-1)!.parts[0] as { text: string };
    assert.equal(last.text, `Question ${question}: ${FILLER}`);
    if (latest === undefined) assert.equal(first.text, `Question 1: ${FILLER}`);
    else {
      assert.equal(first.text, latest);
      assert.ok(request.messages.length >= 2);
    }
  }
  // The log still derives exactly what the last request carried, plus its answer.
  const derived = await stack.sessions.deriveMessages("long");
  assert.deepStrictEqual(derived.slice(0, -1), main.at(-1)!.messages);
});
