/**
 * Reading a log back from its head: what finds the last of something (a turn's bookend, a plan, a child's answer)
 * at the cost of the events since it, not of the whole session.
 *
 * @module
 */
import { EventLoopTurns } from "@terret/hames";
import type { SessionEvent } from "./envelope.ts";
import type { Sessions } from "./sessions.ts";

/** Options for {@linkcode readBack}. */
export interface ReadBackOptions {
  /** Only events of these types (the windows still step over every seq). */
  readonly types?: readonly string[];
  /** Seqs per window (default {@linkcode READ_BACK_WINDOW}); an integer of at least 1. */
  readonly window?: number;
  /** Aborts the reads (the iteration rejects with the signal's reason). */
  readonly signal?: AbortSignal;
}

/** The default seqs per window of {@linkcode readBack}. */
export const READ_BACK_WINDOW = 512;

/**
 * A session's events from its head back to seq 1, a window of seqs at a time: each window is one read, in seq
 * order, and the windows come newest first (an empty one where no event of `types` falls in it). The head is read
 * once, at the start: events appended while the iteration runs are not in it. Stop iterating (`break`) when what
 * you look for is found, and no further window is read. The event loop gets a turn ({@linkcode EventLoopTurns})
 * before each window after the first, so reading back through a long session never holds sockets and other agents
 * for more than one window's read.
 *
 * @throws {RangeError} for a window that is not an integer of at least 1
 *
 * @example
 * ```ts
 * import { createContext } from "@terret/hames";
 * import { MemorySessionStore, readBack } from "@terret/core/sessions";
 * import { SessionLog } from "@terret/core";
 * await using ctx = createContext({ mode: "test" });
 * const log = new SessionLog(ctx, new MemorySessionStore());
 * const { session_id } = await log.create();
 * await log.append(session_id, { type: "user/message", payload: { content: "hi" } });
 * for await (const events of readBack(log, session_id, { types: ["user/message"] })) {
 *   console.log(events.map((event) => event.seq)); // [2]
 * }
 * ```
 */
export async function* readBack(
  sessions: Pick<Sessions, "head" | "read">,
  sessionId: string,
  options: ReadBackOptions = {},
): AsyncGenerator<readonly SessionEvent[], void, undefined> {
  const window = options.window ?? READ_BACK_WINDOW;
  if (!Number.isSafeInteger(window) || window < 1) {
    throw new RangeError(
      `Cannot read a log back: the window must be an integer >= 1, got ${window}`,
    );
  }
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const types = options.types === undefined ? {} : { types: options.types };
  let to = await sessions.head(sessionId, signal);
  let turns: EventLoopTurns | undefined;
  while (to > 0) {
    // The first window answers nearly every caller: only a read that goes further pays for turns.
    if (turns === undefined) turns = new EventLoopTurns();
    else await turns.turn();
    const from = Math.max(1, to - window + 1);
    yield await sessions.read(sessionId, { ...types, from_seq: from, to_seq: to, ...signal });
    to = from - 1;
  }
}
