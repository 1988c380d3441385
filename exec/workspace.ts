/**
 * The `workspace` row: grants agents a list of directories, resolved to real paths at mount.
 *
 * @module
 */
import {
  definePlugin,
  type HostPermissions,
  type PermissionDeps,
  type Plugin,
} from "@terret/hames";
import { TerretError } from "./errors.ts";
import { WorkspaceKey } from "@terret/core";
import { z } from "zod";
import { expandHome } from "./containment.ts";

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
 * **Permissions**: read of each directory (it is resolved and checked at mount; the host grants its real location
 * too), and the `HOME` variable when a directory starts with `~`.
 *
 * @throws {TerretError} `ConfigInvalid` (at start) when a directory does not exist or is not a directory
 */
export const workspacePlugin: Plugin<WorkspaceConfig> = definePlugin({
  name: "workspace",
  description: "The directories agents are granted (resolved to real paths)",
  provides: [WorkspaceKey],
  config: schema,
  permissions(config): HostPermissions {
    const home = config.dirs.some((dir) => dir === "~" || dir.startsWith("~/"));
    return { read: [...config.dirs], ...(home ? { env: ["HOME"] } : {}) };
  },
  async apply(ctx, config) {
    const dirs: string[] = [];
    for (const dir of config.dirs) dirs.push(await realDirectory(dir));
    ctx.provide(WorkspaceKey, { dirs: Object.freeze([...new Set(dirs)]) });
  },
});

/**
 * The directories the `workspace` row grants, for the permissions hook of a row that injects `workspace`: the
 * configured `dirs` (as written; the host planner resolves `~`, relative paths and links), `[]` when no row
 * provides the workspace, and `true` (a whole category) when a plugin other than `workspace` provides it, since
 * its directories cannot be known from its config.
 */
export function grantedDirs(deps: PermissionDeps): readonly string[] | true {
  const row = deps.provider(WorkspaceKey);
  if (row === undefined) return [];
  if (row.plugin !== workspacePlugin.name) return true;
  return (row.config as WorkspaceConfig).dirs;
}

async function realDirectory(dir: string): Promise<string> {
  const expanded = expandHome(dir);
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
