/**
 * A bounded text log keeping the most recent output of a child (its stderr), for error messages and diagnostics.
 *
 * @module
 */

/** Keeps the last `limit` characters appended, counting what it dropped. */
export class TailLog {
  readonly #limit: number;
  #text = "";
  #dropped = 0;

  /** @param limit characters kept (the oldest are dropped first) */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new RangeError(
        `Cannot keep a log of ${limit} characters: expected a non-negative integer`,
      );
    }
    this.#limit = limit;
  }

  /** Characters dropped so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Appends text, dropping the oldest characters past the limit. */
  append(text: string): void {
    this.#text += text;
    const excess = this.#text.length - this.#limit;
    if (excess > 0) {
      this.#text = this.#text.slice(excess);
      this.#dropped += excess;
    }
  }

  /** Everything kept. */
  text(): string {
    return this.#text;
  }

  /**
   * The last `count` non-empty lines kept, without terminal colour codes, joined with `" | "` (for one-line error
   * messages).
   */
  lastLines(count: number): string {
    // deno-lint-ignore no-control-regex
    return this.#text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").split("\n").map((line) => line.trim())
      .filter((line) => line.length > 0).slice(-count).join(" | ");
  }
}
