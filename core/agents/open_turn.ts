/**
 * Finding a session's open turn: a `turn/start` with no `turn/end` after it.
 *
 * @module
 */
import type { Sessions, SignalOptions } from "../sessions/sessions.ts";
import type { OpenTurn } from "./driver.ts";

/**
 * The session's open turn, if its log ends inside one (the process died, or the agents service stopped, between a
 * `turn/start` and its `turn/end`).
 *
 * @returns the open turn, or `undefined` when every turn is closed (or the session has none)
 */
export async function findOpenTurn(
  sessions: Sessions,
  sessionId: string,
  options: SignalOptions = {},
): Promise<OpenTurn | undefined> {
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  // The last bookend is almost always near the head: read back a window at a time until one is found.
  let to = await sessions.head(sessionId, signal);
  while (to > 0) {
    const from = Math.max(1, to - WINDOW + 1);
    const bookends = await sessions.read(sessionId, {
      types: ["turn/start", "turn/end"],
      from_seq: from,
      to_seq: to,
      ...signal,
    });
    const last = bookends.at(-1);
    if (last !== undefined) {
      return last.type === "turn/start" ? { turn_start_seq: last.seq } : undefined;
    }
    to = from - 1;
  }
  return undefined;
}

/** Seqs read per window when looking back for the last turn bookend. */
const WINDOW = 512;
