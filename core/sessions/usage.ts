/**
 * The usage rollup: a pure fold of every `step/end` a session recorded, plus the utility calls (the compactor's
 * `session/compacted` and the titler's `session/titled` carry their own `usage`), the subagents' runs (a `Task`
 * `tool/result` carries its child session's rollup in `details.usage`), and the steps whose usage is unknown.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";

/** The event types the rollup reads. */
export const USAGE_EVENT_TYPES: readonly string[] = Object.freeze([
  "step/start",
  "step/end",
  "session/compacted",
  "session/titled",
  "tool/result",
]);

/**
 * What a session's events add up to: honestly "what the log recorded", not what a vendor billed. Token and cost
 * totals include the utility calls and the subagents' runs (their own steps are not counted in `steps`).
 */
export interface UsageRollup {
  /** The number of `step/end` events. */
  readonly steps: number;
  /**
   * Steps whose usage is unknown (counted as such, never as zero): a step closed as `interrupted` (its process
   * died before `step/end`, and resume closed it), or one opened by `step/start` and never closed.
   */
  readonly unknown_steps: number;
  /** Utility model calls recorded (a compaction's summary, a title), their usage included in the totals. */
  readonly utility_calls: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cached_tokens: number;
  /** The summed cost of the calls that reported one; `null` when none did. */
  readonly cost: number | null;
}

/**
 * Sums the usage of every `step/end` event, every utility call and every subagent run (a `tool/result` whose
 * `details.usage` holds its child session's totals); other events are ignored.
 *
 * @example
 * ```ts
 * import { rollupUsage } from "@terret/core/sessions";
 * const at = "2026-01-01T00:00:00.000Z";
 * const usage = { input_tokens: 10, output_tokens: 2, cost: 0.5 };
 * const rollup = rollupUsage([
 *   { id: "a", session_id: "s", seq: 1, at, type: "step/end", payload: { usage, finish_reason: "stop" }, parent_id: null },
 * ]);
 * console.log(rollup);
 * // { steps: 1, unknown_steps: 0, utility_calls: 0, input_tokens: 10, output_tokens: 2, cached_tokens: 0, cost: 0.5 }
 * ```
 */
export function rollupUsage(events: Iterable<SessionEvent>): UsageRollup {
  const tally = new UsageTally();
  for (const event of events) tally.add(event);
  return tally.rollup();
}

/**
 * The running state of {@linkcode rollupUsage}: events added one at a time, in seq order, each once, and a rollup
 * taken at any point is what `rollupUsage` gives for the events added so far. The sessions service keeps one per
 * cached session, advanced by commits, so a session's usage costs the events since it was last asked for.
 */
export class UsageTally {
  #steps = 0;
  #unknown = 0;
  #utility = 0;
  #input = 0;
  #output = 0;
  #cached = 0;
  #cost: number | null = null;
  /** A `step/start` not yet closed by its `step/end`. */
  #open = false;

  /** Adds one event (events of types outside {@linkcode USAGE_EVENT_TYPES} are ignored). */
  add(event: SessionEvent): void {
    const payload = event.payload as {
      usage?: Record<string, unknown>;
      finish_reason?: unknown;
      details?: { usage?: unknown };
    };
    switch (event.type) {
      case "step/start":
        if (this.#open) this.#unknown++;
        this.#open = true;
        break;
      case "step/end":
        this.#open = false;
        this.#steps++;
        if (payload.finish_reason === "interrupted") this.#unknown++;
        else this.#addUsage(payload.usage ?? {});
        break;
      case "tool/result": {
        const usage = payload.details?.usage;
        if (typeof usage === "object" && usage !== null) {
          this.#addUsage(usage as Record<string, unknown>);
        }
        break;
      }
      case "session/compacted":
      case "session/titled":
        if (typeof payload.usage === "object" && payload.usage !== null) {
          this.#utility++;
          this.#addUsage(payload.usage);
        }
        break;
    }
  }

  /** The rollup of the events added so far (a step still open counts as unknown). */
  rollup(): UsageRollup {
    return {
      steps: this.#steps,
      unknown_steps: this.#unknown + (this.#open ? 1 : 0),
      utility_calls: this.#utility,
      input_tokens: this.#input,
      output_tokens: this.#output,
      cached_tokens: this.#cached,
      cost: this.#cost,
    };
  }

  #addUsage(usage: Record<string, unknown>): void {
    this.#input += numberOr0(usage.input_tokens);
    this.#output += numberOr0(usage.output_tokens);
    this.#cached += numberOr0(usage.cached_tokens);
    if (typeof usage.cost === "number") this.#cost = (this.#cost ?? 0) + usage.cost;
  }
}

function numberOr0(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
