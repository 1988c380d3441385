/**
 * Grep's engines: the pure TypeScript search over the `fs` seam, the ripgrep search over the `subprocess` seam,
 * the file selection rules both follow, and the structured result both produce. Internal to `@terret/exec`.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import type { Subprocess } from "@terret/core";
import { basename, dirname } from "node:path";
import type { FileSystem } from "../fs/file_system.ts";
import { compileGlob } from "../fs/glob.ts";

/** One search, as both engines understand it. */
export interface GrepQuery {
  readonly pattern: string;
  /** The real path searched: a directory (walked) or a file. */
  readonly root: string;
  readonly rootIsDir: boolean;
  readonly ignoreCase: boolean;
  readonly multiline: boolean;
  readonly glob?: string | undefined;
  readonly type?: string | undefined;
  readonly before: number;
  readonly after: number;
  /** Files larger than this are skipped. */
  readonly maxFileBytes: number;
  /** Files examined before the walk stops (truncated). */
  readonly maxFiles: number;
  readonly signal?: AbortSignal;
}

/** A matching (or context) line run, as ripgrep's JSON reports it. */
export interface GrepEvent {
  /** The first line's number (1-based). */
  readonly n: number;
  /** The line (or, for a multiline match, the lines joined by `\n`), without its final line terminator. */
  readonly text: string;
  readonly kind: "match" | "context";
  /** The matched substrings (match events only). */
  readonly submatches: readonly string[];
}

/** One file with matches. */
export interface GrepFile {
  /** The absolute path. */
  readonly path: string;
  readonly events: readonly GrepEvent[];
}

/** What a search found, files in walk order (sorted by name at each level). */
export interface GrepFound {
  readonly files: readonly GrepFile[];
  /** Set when the walk stopped early. */
  readonly truncated?: string;
}

/** File types (`type`), as globs over the file name; ripgrep is handed the same definitions. */
export const GREP_TYPES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  c: ["*.c", "*.h"],
  cpp: ["*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"],
  css: ["*.css", "*.scss"],
  go: ["*.go"],
  html: ["*.html", "*.htm"],
  java: ["*.java"],
  js: ["*.js", "*.jsx", "*.mjs", "*.cjs"],
  json: ["*.json"],
  md: ["*.md", "*.markdown"],
  py: ["*.py", "*.pyi"],
  rb: ["*.rb"],
  rust: ["*.rs"],
  sh: ["*.sh", "*.bash"],
  sql: ["*.sql"],
  toml: ["*.toml"],
  ts: ["*.ts", "*.tsx", "*.mts", "*.cts"],
  txt: ["*.txt"],
  yaml: ["*.yaml", "*.yml"],
});

/** Compiles the search regular expression (JavaScript syntax), or throws a message for the model. */
function compilePattern(
  query: Pick<GrepQuery, "pattern" | "ignoreCase" | "multiline">,
): RegExp {
  const flags = `g${query.multiline ? "ms" : ""}u${query.ignoreCase ? "i" : ""}`;
  try {
    return new RegExp(query.pattern, flags);
  } catch (error) {
    throw new TypeError(
      `Cannot search for ${JSON.stringify(query.pattern)}: ${(error as Error).message}`,
    );
  }
}

/** Checks `type` against {@linkcode GREP_TYPES}. */
export function checkType(type: string | undefined): void {
  if (type !== undefined && !Object.hasOwn(GREP_TYPES, type)) {
    throw new TypeError(
      `Unknown file type ${JSON.stringify(type)}: use one of ${Object.keys(GREP_TYPES).join(", ")}`,
    );
  }
}

interface Rule {
  readonly regex: RegExp;
  readonly negate: boolean;
  readonly dirOnly: boolean;
  readonly anchored: boolean;
}

interface RuleSet {
  /** The directory of the `.gitignore`, relative to the root (`""` for the root). */
  readonly base: string;
  readonly rules: readonly Rule[];
}

/** Parses a `.gitignore` (the subset both engines agree on: `!`, `#`, trailing `/`, anchoring, globs). */
function parseGitignore(text: string, base: string): RuleSet {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.replace(/\/+$/, "");
    if (line === "") continue;
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    try {
      rules.push({ regex: compileGlob(line.split("/"), { dot: true }), negate, dirOnly, anchored });
    } catch {
      // An unterminated class or brace: git ignores such a line too.
    }
  }
  return { base, rules };
}

/** True when `rel` (relative to the root) is ignored by the rule sets, deepest set first, last rule winning. */
function ignored(sets: readonly RuleSet[], rel: string, isDir: boolean): boolean {
  for (let i = sets.length - 1; i >= 0; i--) {
    const set = sets[i]!;
    const local = set.base === "" ? rel : rel.slice(set.base.length + 1);
    for (let r = set.rules.length - 1; r >= 0; r--) {
      const rule = set.rules[r]!;
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(rule.anchored ? local : basename(local))) return !rule.negate;
    }
  }
  return false;
}

/**
 * The `glob` override, decided before anything else as ripgrep does: a name glob without `/`, a root-relative path
 * glob with one, `!` for an exclusion. `"include"` admits a file whatever `.gitignore`, hidden names or `type` say;
 * `"exclude"` drops it (or prunes a directory); `undefined` leaves the decision to the other rules.
 */
function globOverride(
  glob: string | undefined,
): (rel: string, isDir: boolean) => "include" | "exclude" | undefined {
  if (glob === undefined) return () => undefined;
  const negated = glob.startsWith("!");
  const source = (negated ? glob.slice(1) : glob).replace(/^\//, "");
  const regex = compileGlob(source.split("/"), { dot: true });
  const onPath = source.includes("/");
  return (rel, isDir) => {
    const hit = regex.test(onPath ? rel : basename(rel));
    if (negated) return hit ? "exclude" : undefined;
    if (hit) return "include";
    return isDir ? undefined : "exclude";
  };
}

/** True when the file name matches `type`'s globs (or no type is asked). */
function typeMatches(type: string | undefined): (rel: string) => boolean {
  if (type === undefined) return () => true;
  const globs = GREP_TYPES[type]!.map((g) => compileGlob([g], { dot: true }));
  return (rel) => globs.some((regex) => regex.test(basename(rel)));
}

/** The pure TypeScript engine: walks with `fs.list`, reads with `fs.readBytes`, never spawns. */
export async function searchWithFs(fs: FileSystem, query: GrepQuery): Promise<GrepFound> {
  const regex = compilePattern(query);
  const override = globOverride(query.glob);
  const typed = typeMatches(query.type);
  const files: GrepFile[] = [];
  const state = { examined: 0, truncated: undefined as string | undefined };
  const searchFile = async (path: string): Promise<void> => {
    let bytes: Uint8Array;
    try {
      bytes = await fs.readBytes(path, { maxBytes: query.maxFileBytes, ...signalOf(query) });
    } catch (error) {
      if (error instanceof TerretError && ["TooLarge", "NotFound", "Denied"].includes(error.code)) {
        return;
      }
      throw error;
    }
    if (query.rootIsDir && bytes.includes(0)) return;
    const events = searchText(new TextDecoder().decode(bytes), regex, query);
    if (events.length > 0) files.push({ path, events });
  };
  if (!query.rootIsDir) {
    await searchFile(query.root);
    return { files };
  }
  const walk = async (dir: string, rel: string, sets: readonly RuleSet[]): Promise<void> => {
    query.signal?.throwIfAborted();
    const listing = await fs.list(dir, { limit: 1_000_000, ...signalOf(query) });
    let scoped = sets;
    if (listing.entries.some((entry) => entry.name === ".gitignore" && entry.type === "file")) {
      const text = await fs.read(`${dir}/.gitignore`, signalOf(query)).catch(() => "");
      scoped = [...sets, parseGitignore(text, rel)];
    }
    for (const entry of listing.entries) {
      if (state.truncated !== undefined) return;
      if (entry.type === "symlink" || entry.type === "other") continue;
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      const isDir = entry.type === "directory";
      const forced = override(childRel, isDir);
      if (forced === "exclude") continue;
      if (
        forced === undefined && (entry.name.startsWith(".") || ignored(scoped, childRel, isDir))
      ) continue;
      if (isDir) {
        await walk(entry.path, childRel, scoped);
        continue;
      }
      if (forced === undefined && !typed(childRel)) continue;
      if (++state.examined > query.maxFiles) {
        state.truncated = `stopped after examining ${query.maxFiles} files`;
        return;
      }
      await searchFile(entry.path);
    }
  };
  await walk(query.root, "", []);
  return state.truncated === undefined ? { files } : { files, truncated: state.truncated };
}

/** Searches one file's text, producing ripgrep-shaped events (context merged, multiline matches grouped). */
function searchText(text: string, regex: RegExp, query: GrepQuery): GrepEvent[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const matchLines = new Map<number, string[]>(); // first line index → submatches
  const spans: { first: number; last: number }[] = [];
  if (query.multiline) {
    const starts = lineStarts(lines);
    for (const found of text.matchAll(regex)) {
      if (found[0] === "") continue;
      const first = lineAt(starts, found.index);
      const end = found.index + found[0].length - 1;
      const last = Math.max(first, lineAt(starts, end));
      const previous = spans.at(-1);
      if (previous !== undefined && first <= previous.last) {
        previous.last = Math.max(previous.last, last);
        matchLines.get(previous.first)!.push(found[0]);
      } else {
        spans.push({ first, last });
        matchLines.set(first, [found[0]]);
      }
    }
  } else {
    lines.forEach((line, index) => {
      const subs = [...line.matchAll(regex)].map((m) => m[0]).filter((m) => m !== "");
      if (subs.length > 0 || regex.test(line)) {
        spans.push({ first: index, last: index });
        matchLines.set(index, subs);
      }
      regex.lastIndex = 0;
    });
  }
  const events: GrepEvent[] = [];
  let shown = -1; // the last line index already emitted
  for (const span of spans) {
    for (let i = Math.max(shown + 1, span.first - query.before); i < span.first; i++) {
      events.push({ n: i + 1, text: lines[i]!, kind: "context", submatches: [] });
    }
    events.push({
      n: span.first + 1,
      text: lines.slice(span.first, span.last + 1).join("\n"),
      kind: "match",
      submatches: matchLines.get(span.first)!,
    });
    shown = span.last;
    const next = spans[spans.indexOf(span) + 1];
    const stop = Math.min(
      lines.length - 1,
      span.last + query.after,
      next === undefined ? Infinity : next.first - 1,
    );
    for (let i = span.last + 1; i <= stop; i++) {
      events.push({ n: i + 1, text: lines[i]!, kind: "context", submatches: [] });
      shown = i;
    }
  }
  return events;
}

function lineStarts(lines: readonly string[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const line of lines) {
    starts.push(at);
    at += line.length + 1;
  }
  return starts;
}

function lineAt(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The ripgrep engine: the same query run by `rg --json` through the subprocess seam (hence the sandbox). */
export async function searchWithRipgrep(
  subprocess: Subprocess,
  rg: string,
  query: GrepQuery,
  options: { readonly timeoutMs: number; readonly maxOutput: number },
): Promise<GrepFound> {
  compilePattern(query); // the same syntax errors as the fallback, before anything runs
  const cwd = query.rootIsDir ? query.root : dirname(query.root);
  const target = query.rootIsDir ? "." : basename(query.root);
  const args = [
    "--json",
    "--no-config",
    "--sort",
    "path",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-dot",
    "--no-messages",
    "--max-filesize",
    String(query.maxFileBytes),
    query.ignoreCase ? "-i" : "-s",
    ...(query.multiline ? ["-U", "--multiline-dotall"] : []),
    ...(query.before > 0 ? ["-B", String(query.before)] : []),
    ...(query.after > 0 ? ["-A", String(query.after)] : []),
    ...(query.glob === undefined ? [] : ["-g", query.glob]),
    ...(query.type === undefined ? [] : [
      "--type-clear",
      query.type,
      ...GREP_TYPES[query.type]!.flatMap((glob) => ["--type-add", `${query.type}:${glob}`]),
      "-t",
      query.type,
    ]),
    "-e",
    query.pattern,
    "--",
    target,
  ];
  const result = await subprocess.run([rg, ...args], {
    cwd,
    timeout: options.timeoutMs,
    maxOutput: options.maxOutput,
    ...signalOf(query),
  });
  if (result.timedOut) {
    throw new TerretError("Timeout", `Grep timed out after ${options.timeoutMs} ms`);
  }
  if (result.code === 2 && !result.stdout.includes('"type":"match"')) {
    throw new TypeError(
      `Cannot search for ${JSON.stringify(query.pattern)}: ${result.stderr.trim()}`,
    );
  }
  const files: GrepFile[] = [];
  const byPath = new Map<string, GrepEvent[]>();
  for (const line of result.stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    let event: RgEvent;
    try {
      event = JSON.parse(line) as RgEvent;
    } catch {
      continue; // a line the output cap cut
    }
    if (event.type !== "match" && event.type !== "context") continue;
    const rel = rgText(event.data.path);
    const path = query.rootIsDir ? `${query.root}/${rel.replace(/^\.\//, "")}` : query.root;
    let events = byPath.get(path);
    if (events === undefined) {
      byPath.set(path, events = []);
      files.push({ path, events });
    }
    events.push({
      n: event.data.line_number,
      text: rgText(event.data.lines).replace(/\n$/, ""),
      kind: event.type,
      submatches: (event.data.submatches ?? []).map((sub) => rgText(sub.match)).filter((m) =>
        m !== ""
      ),
    });
  }
  const cut = result.truncated.stdout > 0
    ? "ripgrep's output was over the capture limit"
    : undefined;
  return cut === undefined ? { files } : { files, truncated: cut };
}

interface RgText {
  readonly text?: string;
  readonly bytes?: string;
}

interface RgEvent {
  readonly type: string;
  readonly data: {
    readonly path: RgText;
    readonly lines: RgText;
    readonly line_number: number;
    readonly submatches?: readonly { readonly match: RgText }[];
  };
}

function rgText(value: RgText): string {
  if (value.text !== undefined) return value.text;
  const binary = atob(value.bytes ?? "");
  return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
}

function signalOf(query: { readonly signal?: AbortSignal }): { signal?: AbortSignal } {
  return query.signal === undefined ? {} : { signal: query.signal };
}
