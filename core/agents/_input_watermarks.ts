/**
 * Where each session's queued input is known claimed, kept after its agent leaves memory, so the next agent made
 * resident on the session reads its queued input from there and not from seq 1. Internal to the agents service.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { Sessions } from "../sessions/sessions.ts";
import { readPendingInput } from "./pending_input.ts";

/** How many sessions' watermarks are kept (the least recently left are forgotten first). */
const MAX_SESSIONS = 10_000;

/**
 * Per session, a seq at or below which every `input/queued` is claimed in the log. Claims are never undone and later
 * input takes later seqs, so a watermark stays true for as long as the log is the same: it is only ever used up to
 * the session's head.
 */
export class InputWatermarks {
  readonly #seqs = new Map<string, number>();

  /** The remembered watermark of a session whose head is `head` (0 without one, or with one past the head). */
  get(sessionId: string, head: number): number {
    const seq = this.#seqs.get(sessionId) ?? 0;
    return seq <= head ? seq : 0;
  }

  /** Remembers a session's watermark, as the most recently used. */
  remember(sessionId: string, settled: number): void {
    this.#seqs.delete(sessionId);
    if (settled <= 0) return;
    this.#seqs.set(sessionId, settled);
    if (this.#seqs.size > MAX_SESSIONS) this.#seqs.delete(this.#seqs.keys().next().value!);
  }

  /**
   * Moves a session's watermark up to what the log shows now, with one read of the input queued after `from` (its
   * agent's own watermark: the read costs that agent's residence). A failed read keeps `from` (still true).
   */
  async settle(
    sessions: Sessions,
    sessionId: string,
    from: number,
    logger: Logger,
  ): Promise<void> {
    this.remember(sessionId, from);
    try {
      const { settled } = await readPendingInput(sessions, sessionId, { after: from });
      this.remember(sessionId, Math.max(settled, from));
    } catch (error) {
      const message = `The queued input of session "${sessionId}" was not read as its agent left`;
      logger.log("debug", message, { session_id: sessionId, error });
    }
  }
}
