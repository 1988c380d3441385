/**
 * The usage rollup: a pure fold of every `step/end` a session recorded.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";

/** What a session's `step/end` events add up to: honestly "what the log recorded", not what a vendor billed. */
export interface UsageRollup {
  /** The number of `step/end` events. */
  readonly steps: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cached_tokens: number;
  /** The summed cost of the steps that reported one; `null` when none did. */
  readonly cost: number | null;
}

/**
 * Sums the usage of every `step/end` event (other events are ignored).
 *
 * @example
 * ```ts
 * import { rollupUsage } from "@terret/core/sessions";
 * const at = "2026-01-01T00:00:00.000Z";
 * const usage = { input_tokens: 10, output_tokens: 2, cost: 0.5 };
 * const rollup = rollupUsage([
 *   { id: "a", session_id: "s", seq: 1, at, type: "step/end", payload: { usage, finish_reason: "stop" }, parent_id: null },
 * ]);
 * console.log(rollup); // { steps: 1, input_tokens: 10, output_tokens: 2, cached_tokens: 0, cost: 0.5 }
 * ```
 */
export function rollupUsage(events: Iterable<SessionEvent>): UsageRollup {
  let steps = 0, input = 0, output = 0, cached = 0;
  let cost: number | null = null;
  for (const event of events) {
    if (event.type !== "step/end") continue;
    const usage = (event.payload as { usage?: Record<string, unknown> }).usage ?? {};
    steps++;
    input += numberOr0(usage.input_tokens);
    output += numberOr0(usage.output_tokens);
    cached += numberOr0(usage.cached_tokens);
    if (typeof usage.cost === "number") cost = (cost ?? 0) + usage.cost;
  }
  return { steps, input_tokens: input, output_tokens: output, cached_tokens: cached, cost };
}

function numberOr0(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
