/**
 * Server-sent events framing over raw network reads: UTF-8 decoding that tolerates a read ending inside a multi-byte
 * character, feeding the spec-compliant {@linkcode SseParser}.
 *
 * @module
 */
import { type SseListener, SseParser } from "./sse_parser.ts";

/** A text-level SSE parser {@linkcode SseDecoder} can feed: {@linkcode SseParser} or an adapter around another. */
export interface SseTextParser {
  /** Feeds decoded text in arbitrary pieces. */
  feed(text: string): void;
  /** Ends the stream, dropping an unterminated event. */
  end(): void;
}

/**
 * Turns network reads into server-sent events, calling `onMessage` for each complete event in order.
 *
 * Contract: comments (`: OPENROUTER PROCESSING`) are skipped; an event still incomplete when {@linkcode
 * SseDecoder.end} is called is discarded, as the SSE spec requires; `onMessage` must not throw (a throw propagates out
 * of `push`).
 *
 * @example
 * ```ts
 * import { SseDecoder } from "@terret/core/llm";
 * const seen: string[] = [];
 * const decoder = new SseDecoder((data) => seen.push(data));
 * const bytes = new TextEncoder().encode(": keepalive\n\ndata: {\"a\":1}\n\n");
 * decoder.push(bytes.subarray(0, 20));
 * decoder.push(bytes.subarray(20));
 * decoder.end();
 * console.log(seen); // ['{"a":1}']
 * ```
 */
export class SseDecoder {
  readonly #text: TextDecoder;
  readonly #parser: SseTextParser;
  #carry: Uint8Array | undefined;

  /**
   * Creates a decoder for one stream.
   *
   * @param onMessage called synchronously for each complete event with its data and event name
   * @param options `parser` replaces the {@linkcode SseParser} (the benchmark compares `eventsource-parser` this way);
   *   `text` is a UTF-8 decoder with `ignoreBOM` to share (each read is decoded whole, so one decoder serves many
   *   streams)
   */
  constructor(
    onMessage: SseListener,
    options: {
      readonly parser?: (onMessage: SseListener) => SseTextParser;
      readonly text?: TextDecoder;
    } = {},
  ) {
    this.#parser = options.parser?.(onMessage) ?? new SseParser(onMessage);
    this.#text = options.text ?? new TextDecoder("utf-8", { ignoreBOM: true });
  }

  /**
   * Feeds one network read. A multi-byte character cut by the read's end is carried over to the next read; each
   * read is then decoded on its own, which is several times cheaper than `TextDecoder`'s streaming mode and gives
   * the same text (a leading BOM is kept for the parser, which strips it only at the start of the stream).
   */
  push(bytes: Uint8Array): void {
    let input = bytes;
    if (this.#carry !== undefined) {
      input = new Uint8Array(this.#carry.byteLength + bytes.byteLength);
      input.set(this.#carry);
      input.set(bytes, this.#carry.byteLength);
      this.#carry = undefined;
    }
    const whole = completeLength(input);
    if (whole < input.byteLength) {
      this.#carry = input.slice(whole);
      input = input.subarray(0, whole);
    }
    if (input.byteLength > 0) this.#parser.feed(this.#text.decode(input));
  }

  /** Ends the input: decodes a trailing partial character (as U+FFFD) and drops an unterminated event. */
  end(): void {
    if (this.#carry !== undefined) {
      this.#parser.feed(this.#text.decode(this.#carry));
      this.#carry = undefined;
    }
    this.#parser.end();
  }
}

/**
 * The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence: a trailing lead byte
 * whose continuation bytes have not all arrived is cut off with them (invalid bytes are left to the decoder).
 */
function completeLength(bytes: Uint8Array): number {
  const length = bytes.byteLength;
  for (let i = length - 1; i >= 0 && i >= length - 4; i--) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for its lead
    const size = byte >= 0xf0 && byte <= 0xf4 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 ? 2 : 1;
    return byte >= 0xc2 && byte <= 0xf4 && i + size > length ? i : length;
  }
  return length;
}
