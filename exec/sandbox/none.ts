/**
 * The `none` sandbox provider: programs run on the host as they are. Explicit opt-in only; never isolated.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { WrappedCommand } from "@terret/core/seams";
import { z } from "zod";
import { checkArgv, checkEnv, containedCwd } from "./_wrap_checks.ts";
import { grantedDirs } from "../workspace.ts";

/** Config of the `none` provider. */
export interface NoneSandboxConfig {
  /** Must be set to acknowledge that programs run unsandboxed on the host. */
  readonly acknowledge_unsandboxed: true;
}

/**
 * Creates the `none` provider over the granted directories: the argv is returned unchanged, `isolated` is false.
 * It still refuses a `cwd` that is not really inside a granted directory (resolved through its links), and it
 * passes exactly the given environment (spawn it with a cleared environment).
 */
export function createNoneSandbox(dirs: readonly string[]): Sandbox {
  return {
    name: "none",
    isolated: false,
    workspaceReady: () => Promise.resolve(),
    async wrap(argv, options): Promise<WrappedCommand> {
      checkArgv(argv);
      const env = checkEnv(options.env);
      const cwd = await containedCwd(options.cwd, dirs);
      return { argv: [...argv], cwd, env };
    },
  };
}

/**
 * Runs programs on the host unchanged (`isolated: false`). It still refuses a `cwd` outside the granted
 * workspaces. The row must say `acknowledge_unsandboxed: true`, so nobody runs unsandboxed by accident.
 *
 * **Permissions**: read of the workspace directories (a cwd is resolved and checked). Running the programs is the
 * `subprocess` row's grant; under `none` they run with the host user's full authority, outside Deno's
 * permissions (Deno does not sandbox what `--allow-run` starts).
 */
export const noneSandboxPlugin: Plugin<NoneSandboxConfig> = definePlugin({
  name: "sandbox-none",
  description: "No sandbox: programs run on the host (explicit opt-in; never isolated)",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  config: z.object({
    acknowledge_unsandboxed: z.literal(true).describe(
      "Required: programs run on the host, uncontained",
    ),
  }),
  permissions(_config, deps): HostPermissions {
    const dirs = grantedDirs(deps);
    return { read: dirs === true ? true : [...dirs] };
  },
  apply(ctx) {
    ctx.provide(SandboxKey, createNoneSandbox(ctx.get(WorkspaceKey).dirs));
  },
});
