import assert from "node:assert/strict";
import type { SessionEvent } from "./envelope.ts";
import { rollupUsage } from "./usage.ts";

function events(...items: [string, unknown][]): SessionEvent[] {
  return items.map(([type, payload], index) => ({
    id: `e${index}`,
    session_id: "s",
    seq: index + 1,
    at: "2026-01-01T00:00:00.000Z",
    type,
    payload,
    parent_id: null,
  }));
}

Deno.test("rollupUsage() counts a step that died before step/end as unknown, never as zero, and adds utility calls", () => {
  const rollup = rollupUsage(events(
    ["step/start", { step: 1 }],
    ["step/end", {
      step: 1,
      usage: { input_tokens: 100, output_tokens: 10, cached_tokens: 40, cost: 0.5 },
      finish_reason: "stop",
    }],
    // The process died mid-request; resume closed the step as interrupted with zeros it never measured.
    ["step/start", { step: 2 }],
    ["step/end", {
      step: 2,
      usage: { input_tokens: 0, output_tokens: 0 },
      finish_reason: "interrupted",
    }],
    ["step/start", { step: 3 }],
    ["step/end", { step: 3, usage: { input_tokens: 50, output_tokens: 5 }, finish_reason: "stop" }],
    ["session/compacted", {
      summary: "S",
      usage: { input_tokens: 300, output_tokens: 20, cost: 0.25 },
    }],
    ["session/titled", { title: "T", usage: { input_tokens: 30, output_tokens: 4 } }],
    ["session/titled", { title: "Fallback", fallback: true }],
    // A step opened and never closed (the process died; nothing has resumed it yet).
    ["step/start", { step: 1 }],
  ));
  assert.deepStrictEqual(rollup, {
    steps: 3,
    unknown_steps: 2,
    utility_calls: 2,
    input_tokens: 480,
    output_tokens: 39,
    cached_tokens: 40,
    cost: 0.75,
  });
});

Deno.test("rollupUsage() of a session with no steps is zeros with a null cost", () => {
  assert.deepStrictEqual(rollupUsage(events(["session/created", {}])), {
    steps: 0,
    unknown_steps: 0,
    utility_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cached_tokens: 0,
    cost: null,
  });
});
