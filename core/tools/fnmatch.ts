/**
 * `fnmatch`-style globs over tool names, compiled to anchored regular expressions: the pattern language of the
 * allow list (`Read`, `mcp__nexus__*`, `terminal_[ior]*`).
 *
 * @module
 */

/**
 * Compiles one case-sensitive `fnmatch` pattern to an anchored `RegExp`.
 *
 * The language (Python's `fnmatch` and Ruby's `File.fnmatch` without flags agree on it):
 * - `*` matches any run of characters, the empty run included; `?` matches exactly one character;
 * - `[abc]`, `[a-z]` match one character of the class; `[!abc]` (or `[^abc]`) one character outside it; a `]`
 *   right after the opening `[` (or `[!`) is a literal member; a `-` first or last in the class is literal; a
 *   reversed range (`[z-a]`) matches nothing;
 * - `\x` matches `x` literally (outside a class), so `\*` matches a star;
 * - a `[` with no closing `]` is a literal `[`; every other character matches itself, case-sensitively.
 *
 * @param pattern the glob
 * @returns a `RegExp` matching whole names only (`^…$`, no flags)
 * @throws {TypeError} when `pattern` is not a string
 *
 * @example
 * ```ts
 * import { fnmatchToRegExp } from "@terret/core/tools";
 * const mcp = fnmatchToRegExp("mcp__nexus__*");
 * console.log(mcp.test("mcp__nexus__search"), mcp.test("mcp__other__search")); // true false
 * ```
 */
export function fnmatchToRegExp(pattern: string): RegExp {
  if (typeof pattern !== "string") {
    throw new TypeError(`Cannot compile glob ${String(pattern)}: it must be a string`);
  }
  let source = "";
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === "*") {
      source += "[\\s\\S]*";
      while (pattern[i + 1] === "*") i++;
    } else if (char === "?") {
      source += "[\\s\\S]";
    } else if (char === "[") {
      const cls = parseClass(pattern, i);
      if (cls === undefined) source += "\\[";
      else {
        source += cls.source;
        i = cls.end;
      }
    } else if (char === "\\" && i + 1 < pattern.length) {
      i++;
      source += escapeLiteral(pattern[i]!);
    } else {
      source += escapeLiteral(char);
    }
    i++;
  }
  return new RegExp(`^${source}$`);
}

/**
 * Returns true when `name` matches the `fnmatch` pattern (case-sensitive, whole name).
 *
 * @example
 * ```ts
 * import { fnmatch } from "@terret/core/tools";
 * console.log(fnmatch("Read", "Re?d"), fnmatch("read", "Read")); // true false
 * ```
 */
export function fnmatch(name: string, pattern: string): boolean {
  return fnmatchToRegExp(pattern).test(name);
}

/**
 * A compiled set of patterns: `test(name)` is true when any pattern matches.
 *
 * @example
 * ```ts
 * import { PatternSet } from "@terret/core/tools";
 * const set = new PatternSet(["Read", "mcp__*"]);
 * console.log(set.test("mcp__a__b"), set.test("Bash")); // true false
 * ```
 */
export class PatternSet {
  /** The source patterns, in the order given. */
  readonly patterns: readonly string[];
  readonly #regexps: readonly RegExp[];
  readonly #memo = new Map<string, boolean>();

  /** @throws {TypeError} when a pattern is not a string */
  constructor(patterns: readonly string[]) {
    this.patterns = Object.freeze([...patterns]);
    this.#regexps = this.patterns.map(fnmatchToRegExp);
  }

  /** True when any pattern matches `name` (answers are memoized per name, bounded). */
  test(name: string): boolean {
    const known = this.#memo.get(name);
    if (known !== undefined) return known;
    const answer = this.#regexps.some((regexp) => regexp.test(name));
    if (this.#memo.size >= MEMO_LIMIT) this.#memo.clear();
    this.#memo.set(name, answer);
    return answer;
  }
}

const MEMO_LIMIT = 4096;

function parseClass(pattern: string, open: number): { source: string; end: number } | undefined {
  let i = open + 1;
  let negate = false;
  if (pattern[i] === "!" || pattern[i] === "^") {
    negate = true;
    i++;
  }
  const members: string[] = [];
  let first = true;
  for (; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "]" && !first) {
      const body = members.join("");
      if (body === "") return { source: negate ? "[\\s\\S]" : "(?!)", end: i };
      return { source: `[${negate ? "^" : ""}${body}]`, end: i };
    }
    first = false;
    if (pattern[i + 1] === "-" && i + 2 < pattern.length && pattern[i + 2] !== "]") {
      const high = pattern[i + 2]!;
      if (char <= high) members.push(`${escapeMember(char)}-${escapeMember(high)}`);
      i += 2;
    } else {
      members.push(escapeMember(char));
    }
  }
  return undefined;
}

function escapeLiteral(char: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(char) ? `\\${char}` : char;
}

function escapeMember(char: string): string {
  return /[\\\]^[-]/.test(char) ? `\\${char}` : char;
}
