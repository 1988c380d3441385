/**
 * ISO-8601 timestamps for envelopes without a `Date` per append. Internal to the sessions service.
 *
 * @module
 */

/**
 * Spells epoch milliseconds as `Date.prototype.toISOString` does, reusing the text up to the second: within one
 * second only the milliseconds change, so an append costs a string concatenation instead of a `Date` and its
 * formatting (most appends of a turn fall in the same second).
 */
export class IsoClock {
  #second = Number.NaN;
  #prefix = "";

  /** `new Date(ms).toISOString()`, for an integer `ms` in the range of `Date`. */
  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.#second) {
      // `YYYY-MM-DDTHH:MM:SS.` (or the six-digit signed year form), cut before the milliseconds.
      this.#prefix = new Date(second * 1000).toISOString().slice(0, -4);
      this.#second = second;
    }
    const rest = ms - second * 1000;
    return this.#prefix + (rest < 10 ? `00${rest}` : rest < 100 ? `0${rest}` : `${rest}`) + "Z";
  }
}
