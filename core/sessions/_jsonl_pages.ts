/**
 * Pages of a JSONL session file: the events, or their stored lines framed as JSON, taken window by window of whole
 * lines. Internal to the JSONL store.
 *
 * @module
 */
import type { SessionEvent } from "./envelope.ts";
import { rowCorrupt } from "./_store_support.ts";
import type { EventJson } from "./store.ts";

const NEWLINE = 10;
/** Stands for a line that is not valid UTF-8 in a window's text (a raw NUL never starts a line the store writes). */
const UNDECODABLE = "\u0000";

/**
 * A page being filled from consecutive windows of whole lines. Each line is parsed once and checked to be JSON
 * holding its seq; what a bad line does is the page's to say.
 */
export abstract class LinePage<T> {
  readonly #store: string;
  readonly #sessionId: string;
  readonly #to: number;
  /** The seq of the next line the page takes: earlier lines of a window (or of a window read again) are skipped. */
  #next: number;
  #done = false;

  constructor(store: string, sessionId: string, from: number, to: number) {
    this.#store = store;
    this.#sessionId = sessionId;
    this.#next = from;
    this.#to = to;
  }

  /** True once the page holds all it can: its bounds are met, or a bad line ended it. */
  get done(): boolean {
    return this.#done;
  }

  /** The page so far. */
  abstract get result(): T;

  /**
   * Takes the whole lines of `bytes`, whose first line holds seq `first`, until the page is done; lines before the
   * next seq the page wants are skipped unread, so windows may overlap. A line in range that is not UTF-8 or not
   * JSON, or holds another seq, is bad: the page's {@linkcode endsAtBadLine} says whether it ends the page or fails
   * the read with `StoreCorrupt`.
   */
  take(bytes: Uint8Array, first: number): void {
    const text = decodeLines(bytes);
    let start = 0;
    let seq = first;
    for (; !this.#done && seq <= this.#to; seq++) {
      const end = text.indexOf("\n", start);
      if (end < 0) break;
      if (seq >= this.#next) {
        const line = text.slice(start, end);
        if (line === UNDECODABLE) {
          this.#bad(seq, `line ${seq} is not valid UTF-8`);
          return;
        }
        let event: SessionEvent | undefined;
        try {
          event = JSON.parse(line) as SessionEvent;
        } catch {
          this.#bad(seq, `line ${seq} is not valid JSON`);
          return;
        }
        if (event?.seq !== seq) {
          const found = typeof event?.seq === "number" ? `holds seq ${event.seq}` : "has no seq";
          this.#bad(seq, `line ${seq} ${found}`);
          return;
        }
        if (this.accept(event, line)) this.#done = true;
        this.#next = seq + 1;
      }
      start = end + 1;
    }
    if (seq > this.#to) this.#done = true;
  }

  /** Adds one checked event (with its stored line) to the page; true once the page is full. */
  protected abstract accept(event: SessionEvent, line: string): boolean;

  /** Whether a bad line may end a page that already holds events (else the read fails at once). */
  protected abstract endsAtBadLine(): boolean;

  #bad(seq: number, why: string): void {
    if (!this.endsAtBadLine()) throw rowCorrupt(this.#store, this.#sessionId, seq, why);
    this.#done = true;
  }
}

/** A `read` page: the events from `from` to `to`, at most `limit`, of `types` only when given; a bad line fails it. */
export class EventPage extends LinePage<SessionEvent[]> {
  readonly #events: SessionEvent[] = [];
  readonly #limit: number;
  readonly #types: ReadonlySet<string> | undefined;

  constructor(
    store: string,
    sessionId: string,
    range: { from: number; to: number; limit: number; types: readonly string[] | undefined },
  ) {
    super(store, sessionId, range.from, range.to);
    this.#limit = range.limit;
    this.#types = range.types === undefined ? undefined : new Set(range.types);
  }

  get result(): SessionEvent[] {
    return this.#events;
  }

  protected accept(event: SessionEvent): boolean {
    if (this.#types === undefined || this.#types.has(event.type)) this.#events.push(event);
    return this.#events.length >= this.#limit;
  }

  protected endsAtBadLine(): boolean {
    return false;
  }
}

/**
 * A `readJson` page: the events from `from` as envelope JSON, stopping at `maxBytes` of JSON (at least one event) or
 * `limit` events. A line that holds the envelope's fields in envelope order (every line the store writes) is returned
 * as it is, any other is serialized from the parsed event, so the text always parses to what `read` returns. A bad
 * line ends the page before it; a page that would start at it throws `StoreCorrupt` naming the store, the session
 * and the seq.
 */
export class JsonPage extends LinePage<EventJson[]> {
  readonly #out: EventJson[] = [];
  readonly #limit: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(
    store: string,
    sessionId: string,
    bounds: { readonly from: number; readonly maxBytes: number; readonly limit: number },
  ) {
    super(store, sessionId, bounds.from, Number.MAX_SAFE_INTEGER);
    this.#limit = bounds.limit;
    this.#maxBytes = bounds.maxBytes;
  }

  get result(): EventJson[] {
    return this.#out;
  }

  protected accept(event: SessionEvent, line: string): boolean {
    const json = canonical(line, event) ? line : JSON.stringify(event);
    this.#out.push({ seq: event.seq, json });
    this.#bytes += json.length;
    return this.#out.length >= this.#limit || this.#bytes >= this.#maxBytes;
  }

  protected endsAtBadLine(): boolean {
    return this.#out.length > 0;
  }
}

/**
 * The text of `bytes`' whole lines, each line that is not valid UTF-8 replaced by {@linkcode UNDECODABLE}. The
 * common case decodes the whole window at once; only a failure decodes it line by line.
 */
function decodeLines(bytes: Uint8Array): string {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    return decoder.decode(bytes);
  } catch {
    let text = "";
    for (
      let start = 0, end = bytes.indexOf(NEWLINE);
      end >= 0;
      end = bytes.indexOf(NEWLINE, start)
    ) {
      try {
        text += decoder.decode(bytes.subarray(start, end + 1));
      } catch {
        text += `${UNDECODABLE}\n`;
      }
      start = end + 1;
    }
    return text;
  }
}

/**
 * True when `line` holds `event`'s envelope fields in envelope order, with no other field and no whitespace: each
 * piece is compared in place (no head string is built, no key list allocated), since replays run this per line.
 */
function canonical(line: string, event: SessionEvent): boolean {
  if (typeof event !== "object" || event === null) return false;
  let at = 0;
  const next = (piece: string): boolean => {
    if (!line.startsWith(piece, at)) return false;
    at += piece.length;
    return true;
  };
  if (
    !(next('{"id":') && next(JSON.stringify(event.id)) && next(',"session_id":') &&
      next(JSON.stringify(event.session_id)) && next(',"seq":') && next(String(event.seq)) &&
      next(',"at":') && next(JSON.stringify(event.at)) && next(',"type":') &&
      next(JSON.stringify(event.type)) && next(',"payload":'))
  ) return false;
  const tail = `,"parent_id":${JSON.stringify(event.parent_id)}}`;
  if (line.length <= at + tail.length || !line.endsWith(tail)) return false;
  let keys = 0;
  for (const _ in event) keys++;
  return keys === 7;
}
