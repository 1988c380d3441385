/**
 * `Write`: creates or replaces a file through the `fs` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { FsKey } from "../fs/file_system.ts";
import { explainDenied, plural, requireAbsolute, seam } from "./_common.ts";

/** The arguments of `Write`. */
export interface WriteArgs {
  readonly file_path: string;
  readonly content: string;
}

const parameters: z.ZodType<WriteArgs> = z.strictObject({
  file_path: z.string().min(1).describe("The absolute path of the file to write"),
  content: z.string().describe("The whole new content of the file"),
});

/**
 * Creates `Write` (`file_path`, `content`): writes the whole file (missing parent directories are created) and
 * answers `Created <path> (N bytes)` or `Replaced <path> (N bytes)`. Mutating, serial, approval `policy`. A re-run
 * after a crash (at-least-once resume) writes the same bytes again.
 */
export function createWriteTool(): ToolDefinition<WriteArgs> {
  return defineTool({
    name: "Write",
    description:
      "Writes a file in the workspace, replacing it if it exists (parent directories are created). Prefer Edit " +
      "to change part of an existing file. file_path must be absolute.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "policy",
    kind: "edit",
    async handler({ file_path, content }, run) {
      const fs = seam(run.ctx, FsKey, "Write");
      requireAbsolute(file_path, "file_path", fs.dirs);
      try {
        const result = await fs.write(file_path, content, { signal: run.signal });
        return `${result.created ? "Created" : "Replaced"} ${result.path} (${
          plural(result.bytes, "byte")
        })`;
      } catch (error) {
        return explainDenied(error, fs.dirs);
      }
    },
  });
}
