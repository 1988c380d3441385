/**
 * The redactor: known secret shapes (regular expressions) and known secret values (literals) replaced by one
 * token, and the check that tells whether a value carries that token.
 *
 * @module
 */
import { TOOL_NAME_PATTERN } from "../tools/tool.ts";
import { PrefixAutomaton } from "./_prefix_automaton.ts";
import { literalPrefix, MIN_MARKER_LENGTH, safePrefixLength } from "./safe_prefix.ts";

/**
 * The default replacement token. Its characters are all in `[A-Za-z0-9_-]`, so a tool name it lands in is still a
 * function name every provider accepts (the log is append-only: a redacted name is projected into the model's
 * history for good), and it starts with `-`, so it is never itself a valid tool name (`TOOL_NAME_PATTERN` needs a
 * leading letter): a call whose whole name was redacted can never resolve to a registered tool.
 */
export const DEFAULT_REDACTION_TOKEN = "-REDACTED-";

/** The longest replacement token accepted. */
export const MAX_TOKEN_LENGTH = 64;

/** Options for {@linkcode Redactor}. */
export interface RedactorOptions {
  /** Regular expression sources (JavaScript syntax, compiled with the `gu` flags) matching secret shapes. */
  readonly patterns?: readonly string[];
  /** What a match becomes (default {@linkcode DEFAULT_REDACTION_TOKEN}). */
  readonly replacement?: string;
}

/**
 * Replaces secret shapes and known secret values in text.
 *
 * Contract: `redact` is a pure function of its input and of the patterns and literals registered at the time of the
 * call; it never throws for ordinary text and returns well-formed text for well-formed input. It catches the shapes
 * it is given and the literals it was told, nothing else: it is not comprehensive. Literals are matched longest
 * first, before the patterns.
 *
 * @example
 * ```ts
 * import { Redactor } from "@terret/core/redaction";
 * const redactor = new Redactor({ patterns: ["sk-[A-Za-z0-9]{8,}"] });
 * redactor.addLiteral("hunter2hunter2");
 * console.log(redactor.redact("key sk-abcdefgh12 and hunter2hunter2")); // "key -REDACTED- and -REDACTED-"
 * console.log(redactor.isRedacted({ args: { "-REDACTED-": 1 } })); // true
 * ```
 */
export class Redactor {
  readonly #token: string;
  readonly #patterns: readonly RegExp[];
  readonly #markers: readonly string[];
  /**
   * Per marker, the automata of the patterns it starts (`undefined` for one the automaton cannot decide): a marker is
   * released where none of them can still match.
   */
  readonly #automata: ReadonlyMap<string, readonly (PrefixAutomaton | undefined)[]>;
  readonly #literals = new Map<string, number>();
  #literalPattern: RegExp | undefined;
  /** The alternation of every literal and pattern (`null`: not built since the literals last changed). */
  #any: RegExp | undefined | null = null;
  /** The registered literals as a list (rebuilt when they change). */
  #literalList: string[] | undefined;

  /**
   * @throws {TypeError} for a pattern that does not compile (naming it), a pattern that matches the empty string
   *   or the token itself (redaction must be idempotent), or a token that is empty, longer than
   *   {@linkcode MAX_TOKEN_LENGTH} or not well-formed
   */
  constructor(options: RedactorOptions = {}) {
    const token = options.replacement ?? DEFAULT_REDACTION_TOKEN;
    checkToken(token);
    this.#token = token;
    this.#patterns = Object.freeze((options.patterns ?? []).map((source, index) => {
      let regex: RegExp;
      try {
        regex = new RegExp(source, "gu");
      } catch (error) {
        throw new TypeError(
          `Cannot compile redaction pattern ${index} ${JSON.stringify(source)}: ${
            (error as Error).message
          }`,
        );
      }
      if (regex.test("")) {
        throw new TypeError(
          `Cannot use redaction pattern ${index} ${
            JSON.stringify(source)
          }: it matches the empty string`,
        );
      }
      regex.lastIndex = 0;
      if (regex.test(token)) {
        throw new TypeError(
          `Cannot use redaction pattern ${index} ${
            JSON.stringify(source)
          }: it matches the replacement token ${JSON.stringify(token)}`,
        );
      }
      regex.lastIndex = 0;
      return regex;
    }));
    const automata = new Map<string, (PrefixAutomaton | undefined)[]>();
    for (const source of options.patterns ?? []) {
      const marker = literalPrefix(source);
      if (marker.length < MIN_MARKER_LENGTH) continue;
      const list = automata.get(marker) ?? [];
      list.push(PrefixAutomaton.compile(source));
      automata.set(marker, list);
    }
    this.#automata = automata;
    this.#markers = Object.freeze([...automata.keys()]);
  }

  /** The replacement token. */
  get token(): string {
    return this.#token;
  }

  /** How many distinct literals are registered. */
  get literalCount(): number {
    return this.#literals.size;
  }

  /**
   * Registers a secret value to replace wherever it appears; returns the function that unregisters it (a value
   * registered twice stays until both are removed). Values shorter than 4 characters are refused: replacing them
   * would shred ordinary text.
   *
   * @throws {TypeError} for a value that is not a string of at least 4 characters, or one that contains the token
   */
  addLiteral(secret: string): () => void {
    if (typeof secret !== "string" || secret.length < 4) {
      throw new TypeError(
        "Cannot register a secret for redaction: it must be at least 4 characters",
      );
    }
    if (secret.includes(this.#token)) {
      throw new TypeError(
        "Cannot register a secret for redaction: it contains the replacement token",
      );
    }
    this.#literals.set(secret, (this.#literals.get(secret) ?? 0) + 1);
    this.#literalPattern = undefined;
    this.#any = null;
    this.#literalList = undefined;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      const count = this.#literals.get(secret) ?? 0;
      if (count <= 1) this.#literals.delete(secret);
      else this.#literals.set(secret, count - 1);
      this.#literalPattern = undefined;
      this.#any = null;
      this.#literalList = undefined;
    };
  }

  /** Replaces every registered literal, then every pattern match, by the token. */
  redact(text: string): string {
    // Text without a match (nearly all of it) is returned as it came, after one test of all expressions at once.
    const any = this.#anyRegex();
    if (any !== undefined && !any.test(text)) return text;
    let out = text;
    const literals = this.#literalRegex();
    if (literals !== undefined && literals.test(out)) {
      literals.lastIndex = 0;
      out = out.replace(literals, this.#replacer);
    }
    for (const pattern of this.#patterns) {
      pattern.lastIndex = 0;
      if (!pattern.test(out)) continue;
      pattern.lastIndex = 0;
      out = out.replace(pattern, this.#replacer);
    }
    return out;
  }

  /** The replacement as a function, so a `$` in the token is never read as a replacement pattern. */
  readonly #replacer = (): string => this.#token;

  /**
   * How much of `text` (a run of streamed text not appended yet) can be appended now without cutting a secret
   * in two: see {@linkcode safePrefixLength} for what is held back; `window` is how many trailing characters a
   * pattern may need before it is recognisable.
   */
  safePrefix(text: string, window: number): number {
    const any = this.#anyRegex();
    return safePrefixLength(text, {
      literals: this.#literalList ??= [...this.#literals.keys()],
      patterns: this.#patterns,
      markers: this.#markers,
      live: this.#live,
      window,
      unmatched: any !== undefined && !any.test(text),
    });
  }

  /** Whether some pattern `marker` starts can still match from `at`; true when one of them cannot be decided. */
  readonly #live = (marker: string, text: string, at: number): boolean =>
    this.#automata.get(marker)?.some((automaton) => automaton?.live(text, at) ?? true) ?? true;

  /** True when `value` (a string, or any JSON value: every string value and every object key) carries the token. */
  isRedacted(value: unknown): boolean {
    return isRedacted(value, this.#token);
  }

  /**
   * One expression matching wherever a literal or a pattern would (their alternation, without `g`, so it keeps no
   * state), or `undefined` when there is nothing to match or the patterns cannot be joined exactly (a
   * backreference or a group name would change meaning in the alternation).
   */
  #anyRegex(): RegExp | undefined {
    if (this.#any !== null) return this.#any;
    const sources = [
      ...[...this.#literals.keys()].map(escapeRegExp),
      ...this.#patterns.map((pattern) => pattern.source),
    ];
    this.#any = undefined;
    if (sources.length > 0 && !sources.some((source) => JOIN_UNSAFE.test(source))) {
      try {
        this.#any = new RegExp(sources.map((source) => `(?:${source})`).join("|"), "u");
      } catch {
        // Left undefined: every expression is tried on its own.
      }
    }
    return this.#any;
  }

  #literalRegex(): RegExp | undefined {
    if (this.#literals.size === 0) return undefined;
    this.#literalPattern ??= new RegExp(
      [...this.#literals.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"),
      "g",
    );
    this.#literalPattern.lastIndex = 0;
    return this.#literalPattern;
  }
}

/**
 * True when `value` carries `token`: a string containing it, or an array or object any of whose string values or
 * keys (at any depth) contains it. The loop asks this of an owed tool call (its name and its arguments) before it
 * re-executes it on resume: a call the log redacted is a different call.
 *
 * @example
 * ```ts
 * import { DEFAULT_REDACTION_TOKEN, isRedacted } from "@terret/core/redaction";
 * console.log(isRedacted({ command: "echo ok" }, DEFAULT_REDACTION_TOKEN)); // false
 * console.log(isRedacted({ env: { "-REDACTED-": "x" } }, DEFAULT_REDACTION_TOKEN)); // true
 * ```
 */
export function isRedacted(value: unknown, token: string): boolean {
  if (typeof token !== "string" || token === "") {
    throw new TypeError("Cannot check for redaction: the token must be a non-empty string");
  }
  const seen = new Set<object>();
  const walk = (item: unknown): boolean => {
    if (typeof item === "string") return item.includes(token);
    if (typeof item !== "object" || item === null || seen.has(item)) return false;
    seen.add(item);
    if (Array.isArray(item)) return item.some(walk);
    for (const [key, child] of Object.entries(item)) {
      if (key.includes(token) || walk(child)) return true;
    }
    return false;
  };
  return walk(value);
}

/** Checks a replacement token (see {@linkcode Redactor}'s constructor). */
export function checkToken(token: unknown): asserts token is string {
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
    throw new TypeError(
      `Cannot use redaction token ${
        JSON.stringify(token)
      }: it must be a string of 1 to ${MAX_TOKEN_LENGTH} characters`,
    );
  }
  if (!token.isWellFormed()) {
    throw new TypeError("Cannot use the redaction token: it is not well-formed text");
  }
}

/** True when `token` is a valid tool name by itself (a deployment may want to know; the default is not). */
export function tokenIsToolName(token: string): boolean {
  return TOOL_NAME_PATTERN.test(token);
}

/** A backreference (`\1`, `\k<name>`) or a named group: a source that cannot join an alternation unchanged. */
const JOIN_UNSAFE = /\\[1-9k]|\(\?<[^=!]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
