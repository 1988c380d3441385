/**
 * Bounded output buffers: a head-and-tail capture for one-shot commands, and a tail buffer for terminals.
 *
 * @module
 */

/** The marker put where bytes were dropped. */
export function truncationMarker(dropped: number): string {
  return `\n[… ${dropped} bytes truncated …]\n`;
}

/**
 * Keeps the first and the last `limit / 2` bytes of a stream and counts what falls between. Cuts land on UTF-8
 * character boundaries, so the rendered text never carries a broken character from the cut.
 */
export class HeadTailCapture {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Uint8Array[] = [];
  #headBytes = 0;
  #tail: Uint8Array[] = [];
  #tailBytes = 0;
  #total = 0;

  /** @param limit the most bytes kept (at least 0) */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new RangeError(`Cannot cap output at ${limit} bytes: expected a non-negative integer`);
    }
    this.#headLimit = Math.ceil(limit / 2);
    this.#tailLimit = limit - this.#headLimit;
  }

  /** Bytes seen in total. */
  get total(): number {
    return this.#total;
  }

  /** Bytes dropped so far. */
  get dropped(): number {
    return Math.max(0, this.#total - this.#headBytes - this.#tailBytes);
  }

  /** Adds a chunk (the chunk may be reused by the caller afterwards). */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(this.#headLimit - this.#headBytes, rest.length);
      this.#head.push(rest.slice(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    if (rest.length >= this.#tailLimit) {
      this.#tail = [rest.slice(rest.length - this.#tailLimit)];
      this.#tailBytes = this.#tailLimit;
      return;
    }
    this.#tail.push(rest.slice());
    this.#tailBytes += rest.length;
    while (this.#tailBytes > this.#tailLimit) {
      const first = this.#tail[0]!;
      const excess = this.#tailBytes - this.#tailLimit;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
      }
    }
  }

  /** Decodes what was kept, with {@linkcode truncationMarker} where bytes were dropped. */
  text(): string {
    const head = concat(this.#head, this.#headBytes);
    const tail = concat(this.#tail, this.#tailBytes);
    if (this.dropped === 0) {
      return new TextDecoder().decode(concat([head, tail], head.length + tail.length));
    }
    const headEnd = utf8End(head);
    const tailStart = utf8Start(tail);
    const dropped = this.dropped + (head.length - headEnd) + tailStart;
    const decoder = new TextDecoder();
    return decoder.decode(head.subarray(0, headEnd)) + truncationMarker(dropped) +
      decoder.decode(tail.subarray(tailStart));
  }
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** The length of `bytes` without a trailing incomplete UTF-8 sequence. */
function utf8End(bytes: Uint8Array): number {
  let i = bytes.length;
  let back = 0;
  while (i > 0 && back < 4 && (bytes[i - 1]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i === 0) return bytes.length;
  const lead = bytes[i - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need === back + 1 ? bytes.length : i - 1;
}

/** The offset of the first byte of `bytes` that is not a UTF-8 continuation byte. */
function utf8Start(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && i < 3 && (bytes[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** The UTF-8 byte length of a string (without encoding it): {@linkcode frontCut} of all of it. */
export function utf8Length(text: string): number {
  return frontCut(text, Infinity)[1];
}

/**
 * Keeps the most recent `limit` bytes of a text stream between reads; what falls off the front is counted and
 * reported by the next {@linkcode TailBuffer.take} as a marker.
 */
export class TailBuffer {
  readonly #limit: number;
  #chunks: string[] = [];
  /** The UTF-8 size of each chunk, so a push never measures what it does not cut. */
  #sizes: number[] = [];
  #bytes = 0;
  #dropped = 0;

  /** @param limit the most bytes kept between reads (at least 1) */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`Cannot buffer ${limit} bytes: expected a positive integer`);
    }
    this.#limit = limit;
  }

  /** Bytes waiting to be taken. */
  get size(): number {
    return this.#bytes;
  }

  /** Bytes dropped since the last take. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * Appends text, dropping the oldest text past the limit (whole characters: a cut inside one drops all of it). Costs
   * the text pushed and the text dropped, never the text kept.
   */
  push(text: string): void {
    if (text.length === 0) return;
    const size = utf8Length(text);
    this.#chunks.push(text);
    this.#sizes.push(size);
    this.#bytes += size;
    while (this.#bytes > this.#limit) {
      const first = this.#sizes[0]!;
      const excess = this.#bytes - this.#limit;
      if (first <= excess) {
        this.#chunks.shift();
        this.#sizes.shift();
        this.#bytes -= first;
        this.#dropped += first;
        continue;
      }
      const [units, bytes] = frontCut(this.#chunks[0]!, excess);
      this.#chunks[0] = this.#chunks[0]!.slice(units);
      this.#sizes[0] = first - bytes;
      this.#bytes -= bytes;
      this.#dropped += bytes;
    }
  }

  /** Returns everything since the last take (prefixed by a marker when bytes were dropped) and empties. */
  take(): { readonly text: string; readonly dropped: number } {
    const dropped = this.#dropped;
    const body = this.#chunks.join("");
    this.#chunks = [];
    this.#sizes = [];
    this.#bytes = 0;
    this.#dropped = 0;
    return { text: dropped > 0 ? `[… ${dropped} bytes dropped …]\n${body}` : body, dropped };
  }
}

/**
 * The shortest front of `text` holding at least `bytes` UTF-8 bytes, in whole characters (a surrogate pair is one
 * 4-byte character; a lone surrogate counts 3): its length in UTF-16 units and in bytes. Walks only that front.
 */
function frontCut(text: string, bytes: number): [number, number] {
  let units = 0;
  let cut = 0;
  while (cut < bytes && units < text.length) {
    const code = text.charCodeAt(units);
    if (code < 0x80) cut += 1;
    else if (code < 0x800) cut += 2;
    else if (code >= 0xd800 && code <= 0xdbff && units + 1 < text.length) {
      cut += 4;
      units++;
    } else cut += 3;
    units++;
  }
  return [units, cut];
}
