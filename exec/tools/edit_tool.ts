/**
 * `Edit`: a uniqueness-checked string replacement in a file, through the `fs` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import { FsKey } from "../fs/file_system.ts";
import { explainDenied, plural, requireAbsolute, seam } from "./_common.ts";

/** The arguments of `Edit` (as the handler gets them, defaults applied). */
export interface EditArgs {
  readonly file_path: string;
  readonly old_string: string;
  readonly new_string: string;
  readonly replace_all: boolean;
}

const parameters: z.ZodType<EditArgs> = z.strictObject({
  file_path: z.string().min(1).describe("The absolute path of the file to edit"),
  old_string: z.string().min(1).describe(
    "The exact text to replace; it must occur exactly once unless replace_all is true",
  ),
  new_string: z.string().describe("The text to put in its place (must differ from old_string)"),
  replace_all: z.boolean().default(false).describe("Replace every occurrence (default false)"),
});

/**
 * Creates `Edit` (`file_path`, `old_string`, `new_string`, `replace_all?`): replaces exactly one occurrence of
 * `old_string` (or every one with `replace_all`) and answers `Replaced N occurrence(s) in <path>`. Zero
 * occurrences, or several without `replace_all`, fail (`EditAmbiguous`) with a message telling the model how to
 * make the target unique; nothing is written then. Mutating, serial, approval `policy`.
 */
export function createEditTool(): ToolDefinition<EditArgs> {
  return defineTool({
    name: "Edit",
    description:
      "Replaces text in a file in the workspace. old_string must match the file exactly (including " +
      "indentation) and occur exactly once, unless replace_all is true; include surrounding lines to make it " +
      "unique. new_string must differ from old_string. file_path must be absolute.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "policy",
    kind: "edit",
    async handler({ file_path, old_string, new_string, replace_all }, run) {
      const fs = seam(run.ctx, FsKey, "Edit");
      requireAbsolute(file_path, "file_path", fs.dirs);
      if (old_string === new_string) {
        throw new TypeError("new_string must differ from old_string: nothing would change");
      }
      try {
        const result = await fs.edit(file_path, old_string, new_string, {
          replaceAll: replace_all,
          signal: run.signal,
        });
        return `Replaced ${plural(result.replacements, "occurrence")} in ${result.path}`;
      } catch (error) {
        if (error instanceof TerretError && error.code === "EditAmbiguous") {
          const found = (error.details as { occurrences?: number } | undefined)?.occurrences ?? 0;
          throw new TerretError(
            "EditAmbiguous",
            found === 0
              ? `Cannot edit "${file_path}": old_string was not found in the file (read the file again and copy ` +
                "the text exactly, including whitespace)"
              : `Cannot edit "${file_path}": old_string occurs ${found} times; include more surrounding text to ` +
                "make it unique, or set replace_all to true",
            { cause: error },
          );
        }
        return explainDenied(error, fs.dirs);
      }
    },
  });
}
