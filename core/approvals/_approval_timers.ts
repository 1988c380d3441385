/**
 * Deadline timers of open approval requests, one per request, re-armed in steps past the timer limit. Internal to
 * approvals.
 *
 * @module
 */
import type { ApprovalClock } from "./approval_clock.ts";
import type { ApprovalRequest } from "./approval_state.ts";

const MAX_DELAY = 2 ** 31 - 1;

/** The timers of a process's open requests. */
export class ApprovalTimers {
  readonly #expire: (sessionId: string, request: ApprovalRequest) => void;
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #clock: () => ApprovalClock;

  constructor(
    expire: (sessionId: string, request: ApprovalRequest) => void,
    clock: () => ApprovalClock,
  ) {
    this.#expire = expire;
    this.#clock = clock;
  }

  /** Arms the request's deadline (once); a deadline already past expires it on the next tick. */
  arm(sessionId: string, request: ApprovalRequest): void {
    if (request.deadline_at === undefined) return;
    const k = `${sessionId}\u0000${request.request_id}`;
    if (this.#timers.has(k)) return;
    const at = Date.parse(request.deadline_at);
    const tick = (): void => {
      const left = Number.isNaN(at) ? 0 : at - this.#clock().now();
      if (left > 0) {
        this.#timers.set(k, setTimeout(tick, Math.min(left, MAX_DELAY)));
        return;
      }
      this.#timers.delete(k);
      this.#expire(sessionId, request);
    };
    this.#timers.set(k, setTimeout(tick, 0));
  }

  /** Drops a request's timer (it was answered). */
  disarm(sessionId: string, requestId: string): void {
    const k = `${sessionId}\u0000${requestId}`;
    const timer = this.#timers.get(k);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(k);
  }

  /** Drops every timer. */
  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
