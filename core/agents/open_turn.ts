/**
 * Finding a session's open turn: a `turn/start` with no `turn/end` after it.
 *
 * @module
 */
import { readBack } from "../sessions/read_back.ts";
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
  // The last bookend is almost always near the head: read back a window at a time until one is found.
  for await (const bookends of readBack(sessions, sessionId, { types: BOOKENDS, ...options })) {
    const last = bookends.at(-1);
    if (last !== undefined) {
      return last.type === "turn/start" ? { turn_start_seq: last.seq } : undefined;
    }
  }
  return undefined;
}

const BOOKENDS = ["turn/start", "turn/end"];
