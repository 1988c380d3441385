/**
 * The `none` sandbox provider: programs run on the host as they are. Explicit opt-in only; never isolated.
 *
 * @module
 */
import { definePlugin, type Plugin, TerretError } from "@terret/hames";
import { type Sandbox, SandboxKey, WorkspaceKey, type WrappedCommand } from "@terret/core";
import { z } from "zod";
import { isInside } from "../paths.ts";

/** Config of the `none` provider. */
export interface NoneSandboxConfig {
  /** Must be set to acknowledge that programs run unsandboxed on the host. */
  readonly acknowledge_unsandboxed: true;
}

/**
 * Runs programs on the host unchanged (`isolated: false`). It still refuses a `cwd` outside the granted
 * workspaces. The row must say `acknowledge_unsandboxed: true`, so nobody runs unsandboxed by accident.
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
  apply(ctx) {
    const workspace = ctx.get(WorkspaceKey);
    const sandbox: Sandbox = {
      name: "none",
      isolated: false,
      workspaceReady: () => Promise.resolve(),
      wrap(argv, options): Promise<WrappedCommand> {
        if (argv.length === 0) return Promise.reject(new TypeError("Cannot wrap an empty argv"));
        if (!workspace.dirs.some((dir) => isInside(options.cwd, dir))) {
          return Promise.reject(
            new TerretError(
              "Denied",
              `Cannot run in "${options.cwd}": outside the granted workspaces`,
            ),
          );
        }
        return Promise.resolve({ argv: [...argv], cwd: options.cwd, env: { ...options.env } });
      },
    };
    ctx.provide(SandboxKey, sandbox);
  },
});
