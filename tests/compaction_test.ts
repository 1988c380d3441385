/**
 * Compaction through the loop (the `compaction` row, the default compactor through the `compactor` role falling
 * back to `main`): automatic near the context window, manual, and a failed summary that leaves the session
 * untouched. The durable events match `tests/golden/compaction/<scenario>.jsonl`; every request is checked against
 * the log (the invariant) and against the window.
 * Regenerate after an intended change with `UPDATE_GOLDEN=1 deno test -A tests/compaction_test.ts`.
 */
import assert from "node:assert/strict";
import { CompactionKey, CompactionService, type LlmRequest, type Message } from "@terret/core";
import { SUMMARY_INSTRUCTIONS } from "@terret/core/compaction";
import { estimateTokens } from "@terret/core/llm";
import {
  createAgentStack,
  errorReply,
  eventShapes,
  type ResponseScript,
  scriptedAdapter,
  textReply,
} from "@terret/core/testing";
import { assertGolden } from "./fixtures/golden.ts";

const WINDOW = 400;
const LONG = (label: string): string =>
  `${label}: ${"lorem ipsum dolor sit amet ".repeat(6)}`.trim();

/** Answers summary requests with `summaries` in order and every other request with a long reply. */
function responder(summaries: readonly (string | "fail")[]): ResponseScript[] {
  let summary = 0;
  let reply = 0;
  return Array.from({ length: 40 }, (): ResponseScript => (request: LlmRequest) => {
    if (request.system === SUMMARY_INSTRUCTIONS) {
      const next = summaries[summary++] ?? "fail";
      return next === "fail"
        ? errorReply({
          kind: "http",
          status: 503,
          message: "Upstream overloaded",
          retryable: false,
        })
        : textReply(next, { usage: { input_tokens: 300, output_tokens: 20, cost: 0.001 } });
    }
    return textReply(LONG(`reply ${++reply}`));
  });
}

async function stackWith(adapterResponses: ResponseScript[], config: Record<string, unknown> = {}) {
  const adapter = scriptedAdapter(adapterResponses, { capabilities: { maxContextTokens: WINDOW } });
  const stack = await createAgentStack({ adapter });
  stack.ctx.plugin(CompactionService, config, { id: "compaction" });
  await stack.ctx.idle();
  return { adapter, stack };
}

const text = (message: Message): string =>
  message.parts.map((part) => part.type === "text" ? part.text : `[${part.type}]`).join("");

Deno.test("golden: compaction triggers before a request over 0.8 of the window; the model sees the summary and the recent turns", async () => {
  const { adapter, stack } = await stackWith(responder(["Summary one.", "Summary two."]));
  await using _ = stack;
  const agent = await stack.agents.ensure("auto");
  for (let turn = 1; turn <= 8; turn++) {
    agent.send(LONG(`question ${turn}`));
    await agent.idle();
  }
  const events = await stack.sessions.read("auto");
  await assertGolden("compaction/auto", eventShapes(events));
  const turns = adapter.requests.filter((request) => request.system !== SUMMARY_INSTRUCTIONS);
  assert.equal(turns.length, 8);
  for (const request of turns) assert.ok(estimateTokens(request) <= WINDOW);
  // After each compaction the model sees the summary, then the kept turns, then the new question.
  // The 4th and 7th requests would have crossed 0.8 x 400 tokens: each was preceded by a compaction keeping only
  // the current step (one turn is more than the 0.3 x 400 tokens kept).
  assert.deepStrictEqual(
    turns.map((request) => [text(request.messages[0]!).slice(0, 14), request.messages.length]),
    [
      ["question 1: lo", 1],
      ["question 1: lo", 3],
      ["question 1: lo", 5],
      ["Summary one.", 2],
      ["Summary one.", 4],
      ["Summary one.", 6],
      ["Summary two.", 2],
      ["Summary two.", 4],
    ],
  );
  // The second summary was made from the first one and the turns after it.
  const summaries = adapter.requests.filter((request) => request.system === SUMMARY_INSTRUCTIONS);
  assert.deepStrictEqual(summaries.map((request) => text(request.messages[0]!).slice(0, 14)), [
    "question 1: lo",
    "Summary one.",
  ]);
  // The invariant holds across compaction: the last request is exactly what the log derives.
  assert.deepStrictEqual(await stack.sessions.deriveMessages("auto"), [
    ...turns.at(-1)!.messages,
    { role: "assistant", parts: [{ type: "text", text: LONG("reply 8") }] },
  ]);
  assert.deepStrictEqual(await stack.sessions.usage("auto"), {
    steps: 8,
    unknown_steps: 0,
    utility_calls: 2,
    input_tokens: 8 * 10 + 2 * 300,
    output_tokens: 8 * 5 + 2 * 20,
    cached_tokens: 0,
    cost: 0.002,
  });
});

Deno.test("golden: a manual compaction with instructions summarizes all but the latest step", async () => {
  const { adapter, stack } = await stackWith(responder(["Manual summary."]), {
    auto: false,
    keep: 0.05,
  });
  await using _ = stack;
  const agent = await stack.agents.ensure("manual");
  for (let turn = 1; turn <= 3; turn++) {
    agent.send(`question ${turn}`);
    await agent.idle();
  }
  const event = await stack.ctx.get(CompactionKey).compact("manual", {
    instructions: "Keep the numbers.",
  });
  assert.equal(event?.type, "session/compacted");
  // Nothing new to summarize: a second compaction right away appends nothing.
  assert.equal(await stack.ctx.get(CompactionKey).compact("manual"), undefined);
  agent.send("question 4");
  await agent.idle();
  await assertGolden("compaction/manual", eventShapes(await stack.sessions.read("manual")));
  const summaryRequest = adapter.requests.find((request) =>
    request.system === SUMMARY_INSTRUCTIONS
  )!;
  assert.deepStrictEqual(summaryRequest.messages.map(text), [
    "question 1",
    LONG("reply 1"),
    "question 2",
    LONG("reply 2"),
    "Summarize the conversation above now, following the instructions. Also: Keep the numbers.",
  ]);
  assert.deepStrictEqual(adapter.requests.at(-1)!.messages.map(text), [
    "Manual summary.",
    "question 3",
    LONG("reply 3"),
    "question 4",
  ]);
  // A manual compaction whose summary fails rejects and appends nothing.
  const head = await stack.sessions.head("manual");
  await assert.rejects(stack.ctx.get(CompactionKey).compact("manual"), {
    code: "CompactionFailed",
    message:
      'Cannot compact session "manual": the summary failed: Cannot complete the compactor call: ' +
      "Upstream overloaded",
  });
  assert.equal(await stack.sessions.head("manual"), head);
});

Deno.test("golden: a failed summary leaves the session untouched, logs the error, and the request goes out", async () => {
  const { adapter, stack } = await stackWith(responder(["fail"]));
  await using _ = stack;
  const logged: string[] = [];
  const original = stack.ctx.logger.log.bind(stack.ctx.logger);
  stack.ctx.logger.log = (level, message, fields) => {
    if (level === "error") logged.push(message);
    return original(level, message, fields);
  };
  const agent = await stack.agents.ensure("failing");
  for (let turn = 1; turn <= 4; turn++) {
    agent.send(LONG(`question ${turn}`));
    await agent.idle();
  }
  const events = await stack.sessions.read("failing");
  await assertGolden("compaction/failed_summary", eventShapes(events));
  assert.equal(events.some((event) => event.type === "session/compacted"), false);
  // Turn 4's request crossed the threshold: its summary failed, was logged, and the request went out whole.
  assert.deepStrictEqual(logged, ['Cannot compact session "failing": the summary failed']);
  const turns = adapter.requests.filter((request) => request.system !== SUMMARY_INSTRUCTIONS);
  assert.equal(turns.length, 4);
  assert.equal(text(turns.at(-1)!.messages[0]!).slice(0, 10), "question 1");
});
