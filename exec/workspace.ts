/**
 * The `workspace` row: grants agents a list of directories, resolved to real paths at mount.
 *
 * @module
 */
import { definePlugin, type Plugin, TerretError } from "@terret/hames";
import { WorkspaceKey } from "@terret/core";
import { z } from "zod";

/** Config of the `workspace` row. */
export interface WorkspaceConfig {
  /** The granted directories; each must exist. `~` expands to `$HOME` when it is set. */
  readonly dirs: readonly string[];
}

const schema: z.ZodType<WorkspaceConfig> = z.object({
  dirs: z.array(z.string().min(1)).describe("Directories agents may touch; empty grants nothing"),
});

/**
 * Provides `workspace` from the row's `dirs`, each resolved through `realpath` so containment compares real
 * paths.
 *
 * @throws {TerretError} `ConfigInvalid` (at start) when a directory does not exist or is not a directory
 */
export const workspacePlugin: Plugin<WorkspaceConfig> = definePlugin({
  name: "workspace",
  description: "The directories agents are granted (resolved to real paths)",
  provides: [WorkspaceKey],
  config: schema,
  async apply(ctx, config) {
    const dirs: string[] = [];
    for (const dir of config.dirs) dirs.push(await realDirectory(dir));
    ctx.provide(WorkspaceKey, { dirs: Object.freeze([...new Set(dirs)]) });
  },
});

async function realDirectory(dir: string): Promise<string> {
  const home = Deno.env.get("HOME");
  const expanded = dir === "~" && home
    ? home
    : dir.startsWith("~/") && home
    ? `${home}${dir.slice(1)}`
    : dir;
  try {
    const real = await Deno.realPath(expanded);
    if (!(await Deno.stat(real)).isDirectory) throw new Error("not a directory");
    return real;
  } catch (error) {
    throw new TerretError(
      "ConfigInvalid",
      `Cannot grant workspace "${dir}": ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}
