/**
 * The socket's per-connection and server-wide limits: the frame-rate bucket, the replay slots, and UTF-8 sizes.
 * Internal.
 *
 * @module
 */

/** What the frame budget says about one incoming frame. */
export type FrameVerdict = "accept" | "refuse" | "drop" | "close";

/**
 * A token bucket of `rate` frames refilled at `rate` per second. A frame that finds it empty is dropped: the
 * first drop after an accepted frame is `refuse` (answer `rate_limited`), later ones `drop` (silent), and the
 * drop that makes `rate` drops within one second `close` (1008).
 */
export class FrameBudget {
  readonly #rate: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;
  #dropWindow = -Infinity;
  #drops = 0;
  #refused = false;

  constructor(rate: number, now: () => number) {
    this.#rate = rate;
    this.#now = now;
    this.#tokens = rate;
    this.#last = now();
  }

  /** Accounts one incoming frame. */
  take(): FrameVerdict {
    const now = this.#now();
    this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#last) * this.#rate) / 1000);
    this.#last = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      this.#refused = false;
      return "accept";
    }
    if (now - this.#dropWindow >= 1000) {
      this.#dropWindow = now;
      this.#drops = 0;
    }
    this.#drops++;
    if (this.#drops >= this.#rate) return "close";
    if (this.#refused) return "drop";
    this.#refused = true;
    return "refuse";
  }
}

/** Replay concurrency figures. */
export interface SlotStats {
  readonly running: number;
  readonly waiting: number;
  readonly peak: number;
}

/** A FIFO semaphore bounding concurrent replays across the server. */
export class ReplaySlots {
  #limit: number;
  #running = 0;
  #peak = 0;
  readonly #waiting: { grant(): void }[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Changes the limit; waiters get slots that the new limit frees. */
  resize(limit: number): void {
    this.#limit = limit;
    this.#drain();
  }

  /**
   * Waits for a slot; resolves with its release (idempotent), or rejects with the signal's reason if it aborts
   * first (then no slot is held).
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          this.#running++;
          this.#peak = Math.max(this.#peak, this.#running);
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.#running--;
            this.#drain();
          });
        },
      };
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
      this.#drain();
    });
  }

  /** The current figures. */
  stats(): SlotStats {
    return { running: this.#running, waiting: this.#waiting.length, peak: this.#peak };
  }

  #drain(): void {
    while (this.#running < this.#limit && this.#waiting.length > 0) this.#waiting.shift()!.grant();
  }
}

/** The UTF-8 size of `text` in bytes, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
