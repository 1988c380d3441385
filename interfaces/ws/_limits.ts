/**
 * The socket's per-connection limits: the frame-rate bucket, and UTF-8 sizes.
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
