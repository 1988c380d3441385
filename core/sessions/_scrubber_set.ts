/**
 * The scrubbers registered with the session log, in registration order, and the append boundary they take part in
 * (`normalize`). Internal to the session log.
 *
 * @module
 */
import type { Context, Disposer } from "@terret/hames";
import { type NormalizedPayload, normalizePayload, type Scrubber } from "./normalize_payload.ts";
import type { ScrubberOptions } from "./sessions.ts";

interface Entry {
  readonly fn: Scrubber;
  readonly marker: string | undefined;
  readonly safePrefix: ((text: string) => number) | undefined;
}

/** The registered scrubbers: what `Sessions.normalize`, `scrubbing`, `safePrefix` and `redactionMarkers` answer from. */
export class ScrubberSet {
  readonly #entries: Entry[] = [];
  /** The scrubbers' functions, in registration order (rebuilt when one is added or removed). */
  #fns: readonly Scrubber[] = [];

  /** A payload through the append boundary: JSON-safe values only, at most `maxBytes`, every scrubber applied. */
  normalize(type: string, payload: unknown, maxBytes: number): NormalizedPayload {
    return normalizePayload(type, payload, { scrubbers: this.#fns, maxBytes });
  }

  /** Whether any scrubber is registered. */
  get scrubbing(): boolean {
    return this.#entries.length > 0;
  }

  /**
   * How much of `text` every scrubber vouches it would leave as it is: the least of their `safePrefix` answers, 0 when
   * any scrubber has none (or answers other than a positive integer), the whole text when none is registered.
   */
  safePrefix(text: string): number {
    let cut = text.length;
    for (const { safePrefix } of this.#entries) {
      if (safePrefix === undefined) return 0;
      const own = safePrefix(text);
      cut = Math.min(cut, Number.isSafeInteger(own) && own > 0 ? own : 0);
    }
    return cut;
  }

  /** The distinct markers the scrubbers write in place of what they remove. */
  markers(): readonly string[] {
    const markers = this.#entries.flatMap((entry) =>
      entry.marker === undefined ? [] : [entry.marker]
    );
    return [...new Set(markers)];
  }

  /**
   * Registers `scrubber` for as long as `owner` lives.
   *
   * @throws {TypeError} when the scrubber is not a function, its marker not a non-empty string, or its safePrefix not a
   * function
   */
  register(owner: Context, scrubber: Scrubber, options: ScrubberOptions = {}): Disposer {
    if (typeof scrubber !== "function") {
      throw new TypeError("Cannot register a scrubber: it must be a function");
    }
    const marker = options.marker;
    if (marker !== undefined && (typeof marker !== "string" || marker === "")) {
      throw new TypeError("Cannot register a scrubber: its marker must be a non-empty string");
    }
    const safePrefix = options.safePrefix;
    if (safePrefix !== undefined && typeof safePrefix !== "function") {
      throw new TypeError("Cannot register a scrubber: its safePrefix must be a function");
    }
    return owner.effect(() => {
      const entry = { fn: scrubber, marker, safePrefix };
      this.#entries.push(entry);
      this.#fns = this.#entries.map((each) => each.fn);
      return () => {
        this.#entries.splice(this.#entries.indexOf(entry) >>> 0, 1);
        this.#fns = this.#entries.map((each) => each.fn);
      };
    }, "sessions: scrubber");
  }
}
