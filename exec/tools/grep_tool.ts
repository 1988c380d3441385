/**
 * `Grep`: a regular-expression search over workspace files — ripgrep through the `subprocess` seam when the
 * execution world has it and config allows, else a pure TypeScript search over the `fs` seam with the same results.
 *
 * @module
 */
import { defineTool, type Subprocess, SubprocessKey, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { FsKey } from "../fs/file_system.ts";
import { explainDenied, plural, requireAbsolute, seam } from "./_common.ts";
import {
  checkType,
  GREP_TYPES,
  type GrepFound,
  type GrepQuery,
  searchWithFs,
  searchWithRipgrep,
} from "./_grep_search.ts";

/** Options of {@linkcode createGrepTool} (the `tools.std` row's `grep` config). */
export interface GrepToolOptions {
  /** `auto`: ripgrep when the execution world has it; `never`: always the TypeScript search. */
  readonly ripgrep: "auto" | "never";
  /** The ripgrep program (looked up on the execution world's PATH). */
  readonly rg: string;
  /** Output lines (or entries) one call returns before it is cut with a note. */
  readonly max_lines: number;
  /** Files larger than this are skipped. */
  readonly max_file_bytes: number;
  /** Files examined before the TypeScript walk stops. */
  readonly max_files: number;
  /** Milliseconds a ripgrep run may take. */
  readonly timeout_ms: number;
}

/** The defaults of {@linkcode GrepToolOptions}. */
export const DEFAULT_GREP_OPTIONS: GrepToolOptions = Object.freeze({
  ripgrep: "auto",
  rg: "rg",
  max_lines: 2000,
  max_file_bytes: 2 * 1024 * 1024,
  max_files: 100_000,
  timeout_ms: 60_000,
});

/** The arguments of `Grep`, as Claude Code names them (defaults applied). */
export interface GrepArgs {
  readonly pattern: string;
  readonly path?: string | undefined;
  readonly glob?: string | undefined;
  readonly output_mode: "content" | "files_with_matches" | "count";
  readonly "-B"?: number | undefined;
  readonly "-A"?: number | undefined;
  readonly "-C"?: number | undefined;
  readonly context?: number | undefined;
  readonly "-n": boolean;
  readonly "-i": boolean;
  readonly "-o": boolean;
  readonly type?: string | undefined;
  readonly head_limit?: number | undefined;
  readonly offset?: number | undefined;
  readonly multiline: boolean;
}

const lines = z.number().int().min(0).max(100);

const parameters: z.ZodType<GrepArgs> = z.strictObject({
  pattern: z.string().min(1).describe(
    "The regular expression to search for (JavaScript/ripgrep syntax)",
  ),
  path: z.string().min(1).optional().describe(
    "The absolute file or directory to search (default: the first workspace directory)",
  ),
  glob: z.string().min(1).optional().describe(
    'Only files matching this glob: "*.ts" matches names, "src/**/*.ts" paths under the search root, "!x" excludes',
  ),
  output_mode: z.enum(["content", "files_with_matches", "count"]).default("files_with_matches")
    .describe(
      "content: matching lines; files_with_matches: file paths (default); count: matches per file",
    ),
  "-B": lines.optional().describe("Lines of context before each match (content mode)"),
  "-A": lines.optional().describe("Lines of context after each match (content mode)"),
  "-C": lines.optional().describe("Lines of context before and after each match (content mode)"),
  context: lines.optional().describe("Same as -C"),
  "-n": z.boolean().default(true).describe("Show line numbers (content mode; default true)"),
  "-i": z.boolean().default(false).describe("Case-insensitive search"),
  "-o": z.boolean().default(false).describe("Show only the matched parts (content mode)"),
  type: z.string().optional().describe(
    `Only files of this type: ${Object.keys(GREP_TYPES).join(", ")}`,
  ),
  head_limit: z.number().int().min(1).optional().describe(
    "Return at most this many lines or entries",
  ),
  offset: z.number().int().min(0).optional().describe("Skip this many lines or entries first"),
  multiline: z.boolean().default(false).describe("Let the pattern span lines (. matches newlines)"),
});

/**
 * Creates `Grep` (Claude Code's fields: `pattern`, `path?`, `glob?`, `output_mode?`, `-B/-A/-C/context`, `-n`,
 * `-i`, `-o`, `type?`, `head_limit?`, `offset?`, `multiline?`). Files are chosen the same way by both engines: the
 * search root walked in name order, names starting with `.` skipped, `.gitignore` files inside the root honoured
 * (`!`, anchoring, trailing `/`, globs), symbolic links not followed, files with a NUL byte (binary) or over
 * `max_file_bytes` skipped. Output: `files_with_matches` lists absolute paths; `count` prints `path:N` (matching
 * lines); `content` prints ripgrep's `path:line:text` (`path-line-text` for context, `--` between groups). Then
 * `offset`/`head_limit`, then the `max_lines` cap (with a note); `No matches found` when nothing matched.
 * Non-mutating, parallel, approval `never`.
 */
export function createGrepTool(
  options: GrepToolOptions = DEFAULT_GREP_OPTIONS,
): ToolDefinition<GrepArgs> {
  const available = new WeakMap<Subprocess, Promise<boolean>>();
  const hasRipgrep = (subprocess: Subprocess, cwd: string): Promise<boolean> => {
    let known = available.get(subprocess);
    if (known === undefined) {
      known = subprocess.run([options.rg, "--version"], { cwd, timeout: 10_000, maxOutput: 4096 })
        .then((result) => result.success && result.stdout.startsWith("ripgrep"), () => false);
      available.set(subprocess, known);
    }
    return known;
  };
  return defineTool({
    name: "Grep",
    description:
      "Searches file contents in the workspace with a regular expression. output_mode: files_with_matches " +
      "(default, file paths), content (matching lines, with -n line numbers, -A/-B/-C context, -o only the " +
      "match), count (matches per file). Filter files with glob or type; -i ignores case; multiline lets a " +
      "match span lines; head_limit and offset page through long results. path must be absolute.",
    parameters,
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    kind: "search",
    async handler(args, run) {
      const fs = seam(run.ctx, FsKey, "Grep");
      if (args.path !== undefined) requireAbsolute(args.path, "path", fs.dirs);
      checkType(args.type);
      const context = args["-C"] ?? args.context ?? 0;
      const content = args.output_mode === "content";
      try {
        const stat = await fs.stat(args.path ?? fs.dirs[0] ?? "/", { signal: run.signal });
        const query: GrepQuery = {
          pattern: args.pattern,
          root: stat.path,
          rootIsDir: stat.type === "directory",
          ignoreCase: args["-i"],
          multiline: args.multiline,
          glob: args.glob,
          type: args.type,
          before: content ? args["-B"] ?? context : 0,
          after: content ? args["-A"] ?? context : 0,
          maxFileBytes: options.max_file_bytes,
          maxFiles: options.max_files,
          signal: run.signal,
        };
        const subprocess = options.ripgrep === "auto" ? run.ctx.maybe(SubprocessKey) : undefined;
        const cwd = query.rootIsDir ? query.root : fs.dirs[0] ?? query.root;
        const found = subprocess !== undefined && await hasRipgrep(subprocess, cwd)
          ? await searchWithRipgrep(subprocess, options.rg, query, {
            timeoutMs: options.timeout_ms,
            maxOutput: 32 * 1024 * 1024,
          })
          : await searchWithFs(fs, query);
        return renderGrep(found, args, options.max_lines);
      } catch (error) {
        return explainDenied(error, fs.dirs);
      }
    },
  });
}

/** Renders a search result for the model (see {@linkcode createGrepTool}). */
function renderGrep(found: GrepFound, args: GrepArgs, maxLines: number): string {
  let entries: string[];
  if (args.output_mode === "files_with_matches") {
    entries = found.files.map((file) => file.path);
  } else if (args.output_mode === "count") {
    entries = found.files.map((file) =>
      `${file.path}:${file.events.filter((e) => e.kind === "match").length}`
    );
  } else {
    entries = contentLines(found, args);
  }
  const offset = args.offset ?? 0;
  const total = entries.length;
  let shown = entries.slice(
    offset,
    args.head_limit === undefined ? undefined : offset + args.head_limit,
  );
  const notes: string[] = [];
  if (shown.length > maxLines) {
    shown = shown.slice(0, maxLines);
    notes.push(
      `[output cut at ${maxLines} lines of ${total - offset}; use offset ${
        offset + maxLines
      } or narrow the search]`,
    );
  }
  if (found.truncated !== undefined) notes.push(`[the search was incomplete: ${found.truncated}]`);
  if (total === 0) return ["No matches found", ...notes].join("\n");
  if (shown.length === 0) {
    return [`No entries after offset ${offset} (there are ${plural(total, "entry")})`, ...notes]
      .join("\n");
  }
  return [...shown, ...notes].join("\n");
}

function contentLines(found: GrepFound, args: GrepArgs): string[] {
  const out: string[] = [];
  const withContext = (args["-C"] ?? args.context ?? args["-A"] ?? args["-B"] ?? 0) > 0;
  let previousEnd: number | undefined;
  let previousFile: string | undefined;
  for (const file of found.files) {
    for (const event of file.events) {
      if (args["-o"] && event.kind === "context") continue;
      const first = event.n;
      const breaks = previousFile !== undefined &&
        (previousFile !== file.path || (previousEnd !== undefined && first > previousEnd + 1));
      if (withContext && !args["-o"] && breaks) out.push("--");
      const sep = event.kind === "match" ? ":" : "-";
      const prefix = (n: number): string =>
        args["-n"] ? `${file.path}${sep}${n}${sep}` : `${file.path}${sep}`;
      if (args["-o"]) {
        for (const part of event.submatches) out.push(`${prefix(first)}${part}`);
      } else {
        event.text.split("\n").forEach((text, i) => out.push(`${prefix(first + i)}${text}`));
      }
      previousEnd = first + event.text.split("\n").length - 1;
      previousFile = file.path;
    }
  }
  return out;
}
