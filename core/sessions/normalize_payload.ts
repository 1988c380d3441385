/**
 * The append boundary: every payload becomes plain, frozen JSON here, and every scrubber runs over it here, so the
 * stored event and every projection derived from it (both sides of the log invariant) see identical bytes.
 *
 * @module
 */
import { TerretError } from "../errors.ts";

/**
 * A scrubber: rewrites a string that is about to enter the log (redacting credentials, typically).
 *
 * Contract: a pure, synchronous function of its input that returns a string; it must not throw for ordinary
 * text, and it should be narrow enough not to match prose (it also rewrites content keys and tool names).
 */
export type Scrubber = (text: string) => string;

/** Options for {@linkcode normalizePayload}. */
export interface NormalizeOptions {
  /** Scrubbers applied, in order, to every string value and content key past the structural surface. */
  readonly scrubbers?: readonly Scrubber[];
  /** The largest accepted payload, in UTF-8 bytes of its JSON encoding (default {@linkcode DEFAULT_MAX_PAYLOAD_BYTES}). */
  readonly maxBytes?: number;
}

/** A normalized payload: the frozen value, its JSON text and that text's UTF-8 size. */
export interface NormalizedPayload {
  /** Deep-frozen plain JSON (null-free of `undefined`, `-0` folded to `0`). */
  readonly value: unknown;
  /** `JSON.stringify(value)`. */
  readonly json: string;
  /** The UTF-8 byte length of `json`. */
  readonly bytes: number;
}

/** The default payload size cap: 16 MiB of JSON. */
export const DEFAULT_MAX_PAYLOAD_BYTES: number = 16 * 1024 * 1024;

/** The deepest nesting accepted. */
export const MAX_PAYLOAD_DEPTH = 256;

/**
 * Field names whose values are structural at the top of a payload: ids, lineage, verdicts, statuses and the live
 * allow list. Scrubbing them could collapse two ids into one token and poison an append-only session for good, so
 * they are exempt, by position only.
 */
export const STRUCTURAL_TOP_KEYS: ReadonlySet<string> = new Set([
  "id",
  "type",
  "kind",
  "status",
  "finish_reason",
  "request_id",
  "decision",
  "source_session_id",
  "boundary_seq",
  "allow",
  "is_error",
]);

/** Field names whose values are structural inside a message part (`parts[i]`, array `content[i]`). */
export const STRUCTURAL_PART_KEYS: ReadonlySet<string> = new Set([
  "type",
  "id",
  "signature",
  "media_type",
]);

type Surface = "top" | "part" | "call" | "content" | "exempt";

/**
 * Normalizes a payload at the append boundary.
 *
 * Accepts `null`, booleans, finite numbers, well-formed strings, arrays and plain objects; drops object keys whose
 * value is `undefined` (as JSON does); folds `-0` to `0`. Structural positions (top-level field names, the values
 * of {@linkcode STRUCTURAL_TOP_KEYS}, and inside `parts`/array `content`/`call` the part field names and the
 * values of {@linkcode STRUCTURAL_PART_KEYS}) are exempt from scrubbing; everything past them (content strings and
 * content keys, tool names and arguments) is scrubbed.
 *
 * @param type the event type, for messages
 * @param payload the caller's value
 * @returns the frozen value and its JSON text
 * @throws {TerretError} `InvalidPayload` for a value that is not JSON (functions, symbols, bigints, `NaN`,
 *   `Infinity`, cycles, class instances, `undefined` in an array, nesting past {@linkcode MAX_PAYLOAD_DEPTH}), for
 *   invalid UTF-8 (a lone surrogate in a string or key) and for two content keys a scrubber folds into one;
 *   `PayloadTooLarge` past the size cap
 */
export function normalizePayload(
  type: string,
  payload: unknown,
  options: NormalizeOptions = {},
): NormalizedPayload {
  const walker = new Walker(
    type,
    options.scrubbers ?? [],
    options.maxBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
  );
  const value = walker.walk(payload, "top", 0);
  const json = JSON.stringify(value);
  const bytes = json.length > walker.maxBytes * 3 ? json.length : utf8Length(json);
  if (bytes > walker.maxBytes) throw walker.tooLarge(bytes);
  return { value, json, bytes };
}

/**
 * One walk over a payload. The path of the value being walked is kept as a stack of keys and indices and spelled
 * out only for an error message, so a payload that is fine allocates no path strings.
 */
class Walker {
  readonly #type: string;
  readonly #scrubbers: readonly Scrubber[];
  readonly maxBytes: number;
  /** The objects being walked, outermost first (a cycle is an object that is its own ancestor). */
  readonly #ancestors: object[] = [];
  /** The keys and indices from the payload down to the value being walked. */
  readonly #path: (string | number)[] = [];
  #chars = 0;

  constructor(type: string, scrubbers: readonly Scrubber[], maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 2) {
      throw new RangeError(
        `Cannot normalize a payload: maxBytes must be an integer >= 2, got ${maxBytes}`,
      );
    }
    this.#type = type;
    this.#scrubbers = scrubbers;
    this.maxBytes = maxBytes;
  }

  walk(value: unknown, surface: Surface, depth: number): unknown {
    switch (typeof value) {
      case "string":
        return this.#string(value, surface !== "exempt");
      case "number":
        if (!Number.isFinite(value)) throw this.#refuse(`is ${value} (not JSON)`);
        return value === 0 ? 0 : value;
      case "boolean":
        return value;
      case "object":
        if (value === null) return null;
        return this.#object(value, surface, depth);
      case "undefined":
        throw this.#refuse("is undefined (not JSON)");
      default:
        throw this.#refuse(`is a ${typeof value} (not JSON)`);
    }
  }

  tooLarge(bytes: number | undefined): TerretError {
    const size = bytes === undefined ? "more than" : `${bytes} bytes, over`;
    return new TerretError(
      "PayloadTooLarge",
      `Cannot append "${this.#type}": the payload is ${size} the ${this.maxBytes}-byte cap`,
      {
        details: {
          type: this.#type,
          max_bytes: this.maxBytes,
          ...(bytes === undefined ? {} : { bytes }),
        },
      },
    );
  }

  #string(text: string, scrub: boolean): string {
    this.#chars += text.length;
    if (this.#chars > this.maxBytes) throw this.tooLarge(undefined);
    if (!text.isWellFormed()) throw this.#refuse("contains a lone surrogate (invalid UTF-8)");
    return scrub && this.#scrubbers.length > 0 ? this.#scrub(text) : text;
  }

  #scrub(text: string): string {
    let out = text;
    for (const scrubber of this.#scrubbers) {
      out = scrubber(out);
      if (typeof out !== "string") {
        throw new TypeError(
          `Cannot scrub ${this.#where()} of "${this.#type}": a scrubber returned a ${typeof out}`,
        );
      }
    }
    if (out !== text && !out.isWellFormed()) {
      throw new TypeError(
        `Cannot scrub ${this.#where()} of "${this.#type}": a scrubber returned invalid UTF-8`,
      );
    }
    return out;
  }

  #object(value: object, surface: Surface, depth: number): unknown {
    if (depth >= MAX_PAYLOAD_DEPTH) {
      throw this.#refuse(`nests deeper than ${MAX_PAYLOAD_DEPTH} levels`);
    }
    const ancestors = this.#ancestors;
    if (ancestors.includes(value)) throw this.#refuse("is a cycle (not JSON)");
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return this.#array(value, surface, depth);
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
        throw this.#refuse(`is a ${name} (not a plain JSON object)`);
      }
      return this.#record(value as Record<string, unknown>, surface, depth);
    } finally {
      ancestors.pop();
    }
  }

  #array(value: readonly unknown[], surface: Surface, depth: number): unknown {
    const element: Surface = surface === "top" ? "content" : surface;
    const out: unknown[] = new Array(value.length);
    const path = this.#path;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      if (!(i in value)) throw this.#refuse("is a hole (not JSON)");
      out[i] = this.walk(value[i], element, depth + 1);
      path.pop();
    }
    return Object.freeze(out);
  }

  #record(value: Record<string, unknown>, surface: Surface, depth: number): unknown {
    const out: Record<string, unknown> = {};
    const scrubKeys = surface === "content" && this.#scrubbers.length > 0;
    const path = this.#path;
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === undefined) continue;
      path.push(key);
      this.#chars += key.length;
      if (!key.isWellFormed()) {
        throw this.#refuse("has a key with a lone surrogate (invalid UTF-8)");
      }
      // An object's own keys are distinct: only a scrubbed one can meet another.
      const name = scrubKeys ? this.#scrub(key) : key;
      if (scrubKeys && Object.hasOwn(out, name)) {
        throw this.#refuse(
          `collides with another key once scrubbed (both become ${JSON.stringify(name)})`,
        );
      }
      define(out, name, this.walk(item, childSurface(surface, key, item), depth + 1));
      path.pop();
    }
    return Object.freeze(out);
  }

  /** The path of the value being walked (`payload.parts[0].text`). */
  #where(): string {
    let where = "payload";
    for (const step of this.#path) where += typeof step === "number" ? `[${step}]` : `.${step}`;
    return where;
  }

  #refuse(what: string): TerretError {
    const path = this.#where();
    return new TerretError("InvalidPayload", `Cannot append "${this.#type}": ${path} ${what}`, {
      details: { type: this.#type, path },
    });
  }
}

function childSurface(surface: Surface, key: string, item: unknown): Surface {
  switch (surface) {
    case "top":
      if (STRUCTURAL_TOP_KEYS.has(key)) return "exempt";
      if (key === "parts" && Array.isArray(item)) return "part";
      if (key === "content" && Array.isArray(item)) return "part";
      if (key === "call" && typeof item === "object" && !Array.isArray(item)) return "call";
      return "content";
    case "part":
      return STRUCTURAL_PART_KEYS.has(key) ? "exempt" : "content";
    case "call":
      return key === "id" ? "exempt" : "content";
    default:
      return surface;
  }
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}

/** Only ASCII: the UTF-8 length of such a string is its length (a native scan, no loop in JS). */
// deno-lint-ignore no-control-regex -- the whole ASCII range, control characters included, on purpose
const ASCII = /^[\x00-\x7f]*$/;

/** The UTF-8 length of a well-formed string (at most 3 × `cap` characters reach here). */
function utf8Length(text: string): number {
  if (ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
