/**
 * Glob patterns: `*` and `?` within a path segment, `**` across segments, `[…]` classes (`[!…]` negated) and
 * `{a,b}` alternatives. Patterns use `/` separators; `\` escapes the next character.
 *
 * @module
 */

/** A glob split into the literal directory it starts from and the pattern below it. */
export interface SplitGlob {
  /** The leading segments without glob syntax, joined (`""` when the pattern starts with one). */
  readonly base: string;
  /** The segments from the first one with glob syntax on (`[]` for a literal path). */
  readonly segments: readonly string[];
}

/** Splits `pattern` at its first segment holding glob syntax. */
export function splitGlob(pattern: string): SplitGlob {
  const parts = pattern.split("/");
  const first = parts.findIndex((part) => hasMagic(part));
  if (first === -1) return { base: pattern, segments: [] };
  const base = parts.slice(0, first).join("/");
  return {
    base: pattern.startsWith("/") && base === "" ? "/" : base,
    segments: parts.slice(first),
  };
}

/** True when `segment` holds glob syntax. */
export function hasMagic(segment: string): boolean {
  return /[*?[{]/.test(segment);
}

/** Options for {@linkcode compileGlob}. */
export interface CompileGlobOptions {
  /** Let wildcards match names starting with `.` (default false). */
  readonly dot?: boolean;
}

/**
 * Compiles glob segments into a regular expression matching a relative `/`-separated path.
 *
 * @throws {TypeError} on an unterminated `[` or `{`
 */
export function compileGlob(segments: readonly string[], options: CompileGlobOptions = {}): RegExp {
  const dot = options.dot ?? false;
  let source = "";
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === "**") {
      const dir = dot ? "[^/]+" : "(?!\\.)[^/]+";
      source += last ? `(?:${dir}(?:/${dir})*)?` : `(?:${dir}/)*`;
      return;
    }
    const guard = dot || segment.startsWith(".") ? "" : "(?!\\.)";
    source += guard + compileSegment(segment) + (last ? "" : "/");
  });
  return new RegExp(`^${source}$`, "u");
}

/** The most path segments a match can have, or `Infinity` with a `**`. */
export function maxDepth(segments: readonly string[]): number {
  return segments.includes("**") ? Infinity : segments.length;
}

function compileSegment(segment: string): string {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]!;
    if (char === "\\" && i + 1 < segment.length) {
      out += escapeRegExp(segment[++i]!);
    } else if (char === "*") {
      while (segment[i + 1] === "*") i++;
      out += "[^/]*";
    } else if (char === "?") {
      out += "[^/]";
    } else if (char === "[") {
      const end = segment.indexOf("]", i + 2);
      if (end === -1) throw new TypeError(`Cannot compile glob "${segment}": unterminated "["`);
      let body = segment.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^/" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      i = end;
    } else if (char === "{") {
      const end = closingBrace(segment, i);
      const alternatives = splitTopLevel(segment.slice(i + 1, end));
      out += `(?:${alternatives.map(compileSegment).join("|")})`;
      i = end;
    } else {
      out += escapeRegExp(char);
    }
  }
  return out;
}

function closingBrace(segment: string, open: number): number {
  let depth = 0;
  for (let i = open; i < segment.length; i++) {
    if (segment[i] === "\\") i++;
    else if (segment[i] === "{") depth++;
    else if (segment[i] === "}" && --depth === 0) return i;
  }
  throw new TypeError(`Cannot compile glob "${segment}": unterminated "{"`);
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "\\") i++;
    else if (body[i] === "{") depth++;
    else if (body[i] === "}") depth--;
    else if (body[i] === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
