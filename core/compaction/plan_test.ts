import assert from "node:assert/strict";
import type { Message } from "../llm/vocabulary.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { planCompaction } from "./_plan.ts";

function events(from: number, ...items: [string, unknown][]): SessionEvent[] {
  return items.map(([type, payload], index) => ({
    id: `e${from + index}`,
    session_id: "s",
    seq: from + index,
    at: "2026-01-01T00:00:00.000Z",
    type,
    payload,
    parent_id: null,
  }));
}

const user = (text: string): Message => ({ role: "user", parts: [{ type: "text", text }] });
const turn = (text: string): [string, unknown][] => [
  ["step/start", { step: 1 }],
  ["user/message", { content: text }],
  ["assistant/message", { parts: [{ type: "text", text: `re ${text}` }] }],
  ["step/end", { step: 1, usage: { input_tokens: 1, output_tokens: 1 }, finish_reason: "stop" }],
];
const history = (...texts: string[]): Message[] =>
  texts.flatMap((text) => [user(text), {
    role: "assistant" as const,
    parts: [{ type: "text" as const, text: `re ${text}` }],
  }]);

Deno.test("planCompaction() keeps the earliest step boundary whose messages fit, and at least the latest step", () => {
  const log = events(1, ["session/created", {}], ...turn("a"), ...turn("b"), ...turn("c"));
  // Every message costs 4+ tokens: a budget of 1,000 keeps b and c (a step must be left to summarize).
  assert.deepStrictEqual(planCompaction(log, history("a", "b", "c"), 1_000), {
    keptFromSeq: 6,
    summarized: 2,
  });
  // A budget of 1 fits nothing: the latest step is kept anyway.
  assert.deepStrictEqual(planCompaction(log, history("a", "b", "c"), 1), {
    keptFromSeq: 10,
    summarized: 4,
  });
});

Deno.test("planCompaction() plans nothing when only the previous summary precedes the latest step", () => {
  // After a compaction that kept turn c (from seq 10), the history is [summary, c, re c].
  const log = events(10, ...turn("c"), ["session/compacted", { summary: "S", kept_from_seq: 10 }]);
  assert.equal(planCompaction(log, [user("S"), ...history("c")], 1), undefined);
  // A new turn after it: the summary and turn c are summarized, turn d kept.
  const more = [...log, ...events(15, ...turn("d"))];
  assert.deepStrictEqual(planCompaction(more, [user("S"), ...history("c", "d")], 1), {
    keptFromSeq: 15,
    summarized: 3,
  });
  assert.equal(planCompaction(events(1, ["session/created", {}]), [], 1), undefined);
});
