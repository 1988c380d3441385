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
  const bookends = await sessions.read(sessionId, {
    types: ["turn/start", "turn/end"],
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const last = bookends.at(-1);
  return last?.type === "turn/start" ? { turn_start_seq: last.seq } : undefined;
}
