/**
 * Where a stream of text may be cut while a secret could still be arriving: the streaming side of the redactor.
 * A producer appending a run of text in pieces (the loop's `assistant/chunk`s) asks how much of what it holds can
 * go now; the append scrubber then sees every secret whole, because no cut ever falls inside one.
 *
 * @module
 */

/** What {@linkcode safePrefixLength} checks against. */
export interface SafePrefixRules {
  /** The registered literal secrets. */
  readonly literals: readonly string[];
  /** The secret shapes (compiled with the `g` flag; `lastIndex` is reset before use). */
  readonly patterns: readonly RegExp[];
  /**
   * Start markers: a pattern's literal prefix, when it has one of at least {@linkcode MIN_MARKER_LENGTH}
   * characters. Text from an occurrence of a marker is held until a match starting there is complete.
   */
  readonly markers: readonly string[];
  /**
   * Whether a match can still start at `at` (where `marker` occurs in `text`), whatever text follows: false releases
   * the marker there. Leave it out to hold every marker until a match starting there is complete.
   */
  readonly live?: (marker: string, text: string, at: number) => boolean;
  /** How many trailing characters a pattern may need before it is recognisable (the `stream_window`). */
  readonly window: number;
  /**
   * True when the caller has found that no literal and no pattern matches anywhere in the text (the search for
   * matches is then skipped); leave it out when unknown.
   */
  readonly unmatched?: boolean;
}

/** The shortest literal prefix of a pattern used as a start marker. */
export const MIN_MARKER_LENGTH = 5;

/**
 * The length of the longest prefix of `text` that can be appended now without cutting a secret in two.
 *
 * Held back: the last `window` characters (a pattern match may still be forming there); any suffix that is the
 * start of a registered literal; every match (literal or pattern) that would straddle the cut or that reaches the
 * end of `text` (it may still grow: an unbounded pattern such as `sk-[A-Za-z0-9]{20,}` is held for as long as it
 * keeps growing); and everything from a start marker whose match is not complete yet, unless `live` says none can
 * start there any more (a PEM private key is held from its `-----BEGIN ` until its END line arrives, while
 * `-----BEGIN CERTIFICATE-----` is released at its first dash). A pattern match that is only recognisable more than
 * `window` characters after its start and has no start marker is the one case the bound does not cover: size the
 * window to the longest such shape.
 *
 * The cut never splits a surrogate pair.
 *
 * @example
 * ```ts
 * import { safePrefixLength } from "@terret/core/redaction";
 * const rules = { literals: ["hunter2hunter2"], patterns: [], markers: [], window: 0 };
 * console.log(safePrefixLength("say hunter", rules)); // 4: "hunter" may start the secret
 * console.log(safePrefixLength("say hello", rules)); // 9
 * ```
 */
export function safePrefixLength(text: string, rules: SafePrefixRules): number {
  const end = text.length;
  let cut = Math.max(0, end - Math.max(0, rules.window));
  for (const literal of rules.literals) {
    // The longest tail of the text that starts the literal (shorter than it): the first position from which the
    // rest of the text is a prefix of the literal.
    const first = literal.charCodeAt(0);
    for (let at = Math.max(0, end - literal.length + 1); at < end; at++) {
      if (text.charCodeAt(at) === first && literal.startsWith(text.slice(at))) {
        cut = Math.min(cut, at);
        break;
      }
    }
  }
  const matches = rules.unmatched === true ? [] : matchesOf(text, rules);
  for (const marker of rules.markers) {
    for (let at = text.indexOf(marker); at >= 0 && at < cut; at = text.indexOf(marker, at + 1)) {
      const closed = matches.some(([start, stop]) => start <= at && at < stop && stop < end);
      if (!closed && (rules.live?.(marker, text, at) ?? true)) {
        cut = at;
        break;
      }
    }
  }
  for (let moved = true; moved;) {
    moved = false;
    for (const [start, stop] of matches) {
      if (start < cut && (stop > cut || stop >= end)) {
        cut = start;
        moved = true;
      }
    }
  }
  if (cut > 0 && cut < end) {
    const code = text.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--;
  }
  return cut;
}

/** A pattern's literal prefix (the characters before its first special one), or `""`. */
export function literalPrefix(source: string): string {
  let prefix = "";
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === "\\") {
      const next = source[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) break;
      prefix += next;
      i++;
      continue;
    }
    if ("^$.*+?()[]{}|".includes(char)) {
      // A quantifier makes the character before it optional or repeated: it is not part of the prefix.
      if ("*+?{".includes(char)) prefix = prefix.slice(0, -1);
      break;
    }
    prefix += char;
  }
  return prefix;
}

function matchesOf(text: string, rules: SafePrefixRules): [number, number][] {
  const found: [number, number][] = [];
  for (const literal of rules.literals) {
    for (let at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + 1)) {
      found.push([at, at + literal.length]);
    }
  }
  for (const pattern of rules.patterns) {
    pattern.lastIndex = 0;
    for (const match of text.matchAll(pattern)) {
      found.push([match.index, match.index + match[0].length]);
    }
  }
  return found;
}
