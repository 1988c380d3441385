/**
 * `Glob`: files matching a glob pattern, through the `fs` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { FsKey } from "../fs/file_system.ts";
import { explainDenied, plural, requireAbsolute, seam } from "./_common.ts";

/** The most paths one `Glob` call lists. */
export const GLOB_MAX_RESULTS = 1000;

/** The arguments of `Glob`. */
export interface GlobArgs {
  readonly pattern: string;
  readonly path?: string | undefined;
}

const parameters: z.ZodType<GlobArgs> = z.strictObject({
  pattern: z.string().min(1).describe(
    'The glob to match, e.g. "**/*.ts" or "src/**/*.{js,jsx}"; relative to path unless absolute',
  ),
  path: z.string().min(1).optional().describe(
    "The absolute directory to search in (default: the first workspace directory)",
  ),
});

/**
 * Creates `Glob` (`pattern`, `path?`): the matching files' absolute real paths, one per line, in sorted
 * depth-first order (`*` and `?` stay in one path segment, `**` crosses them, `[…]` and `{a,b}` work; names
 * starting with `.` match only a pattern segment that starts with `.`), at most {@linkcode GLOB_MAX_RESULTS} with a
 * note when there are more; `No files found` when none. Non-mutating, parallel, approval `never`.
 */
export function createGlobTool(): ToolDefinition<GlobArgs> {
  return defineTool({
    name: "Glob",
    description:
      'Finds files in the workspace by glob pattern ("**/*.ts", "src/*.{js,jsx}"), listing absolute paths in ' +
      "sorted order. path, when given, must be an absolute directory.",
    parameters,
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    kind: "search",
    async handler({ pattern, path }, run) {
      const fs = seam(run.ctx, FsKey, "Glob");
      if (path !== undefined) requireAbsolute(path, "path", fs.dirs);
      try {
        const found = await fs.glob(pattern, {
          limit: GLOB_MAX_RESULTS,
          signal: run.signal,
          ...(path === undefined ? {} : { cwd: path }),
        });
        if (found.paths.length === 0) return "No files found";
        const note = found.truncated
          ? `\n[showing the first ${
            plural(found.paths.length, "file")
          }; narrow the pattern or the path]`
          : "";
        return found.paths.join("\n") + note;
      } catch (error) {
        return explainDenied(error, fs.dirs);
      }
    },
  });
}
