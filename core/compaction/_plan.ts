/**
 * Where a compaction cuts: the earliest step boundary whose following history fits the keep budget. Internal to
 * the compaction row.
 *
 * @module
 */
import { estimateTokens } from "../llm/token_estimate.ts";
import type { Message } from "../llm/vocabulary.ts";
import { BUILTIN_PROJECTIONS } from "../sessions/derive_messages.ts";
import type { SessionEvent } from "../sessions/envelope.ts";

/** A planned compaction. */
export interface CompactionPlan {
  /** The first seq whose messages are kept verbatim (a `step/start`). */
  readonly keptFromSeq: number;
  /** How many leading messages of the current history the summary replaces. */
  readonly summarized: number;
}

/**
 * Plans a compaction of `history` (the session's model history at the last of `events`).
 *
 * @param events the session's events from the previous compaction's `kept_from_seq` (or 1) to the head
 * @param history the model history derived from the whole log up to the same head
 * @param keepTokens the most estimated tokens the kept messages may take
 * @returns the plan, or `undefined` when nothing new can be summarized (the history holds at most the previous
 *   summary before the latest step boundary)
 */
export function planCompaction(
  events: readonly SessionEvent[],
  history: readonly Message[],
  keepTokens: number,
): CompactionPlan | undefined {
  // Project the events again, tagging each message with the seq of the event that produced it. Earlier
  // compactions are skipped: their summary is the one message before this window.
  const messages: Message[] = [];
  const origins: number[] = [];
  const boundaries: number[] = [];
  for (const event of events) {
    if (event.type === "step/start") boundaries.push(event.seq);
    if (event.type === "session/compacted") continue;
    const project = BUILTIN_PROJECTIONS.get(event.type);
    if (project === undefined) continue;
    const before = messages.length;
    project(event, messages);
    for (let i = before; i < messages.length; i++) origins.push(event.seq);
  }
  const prefix = Math.max(0, history.length - messages.length);
  // Something new must be summarized: more than the previous summary alone.
  const least = prefix === 0 ? 1 : 2;
  // Walk the boundaries from the latest back, adding the tokens of the messages each one keeps: the latest is
  // always a candidate; an earlier one replaces it while the kept messages still fit. Linear in the messages.
  let plan: CompactionPlan | undefined;
  let index = messages.length;
  let kept = 0;
  for (let b = boundaries.length - 1; b >= 0; b--) {
    const seq = boundaries[b]!;
    while (index > 0 && origins[index - 1]! >= seq) {
      index--;
      kept += estimateTokens({ messages: [messages[index]!] });
    }
    const summarized = prefix + index;
    if (summarized < least) break;
    if (plan !== undefined && kept > keepTokens) break;
    plan = { keptFromSeq: seq, summarized };
    if (kept > keepTokens) break;
  }
  return plan;
}
