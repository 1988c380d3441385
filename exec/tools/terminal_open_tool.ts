/**
 * `terminal_open`: starts a long-lived program on a named terminal, through the `terminals` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { TerminalsKey } from "../process/terminals.ts";
import { requireAbsolute, seam } from "./_common.ts";
import { FsKey } from "../fs/file_system.ts";

/** The arguments of `terminal_open`. */
export interface TerminalOpenArgs {
  readonly name: string;
  readonly command: string;
  readonly cwd?: string | undefined;
  readonly cols?: number | undefined;
  readonly rows?: number | undefined;
}

/** Terminal names the tools accept. */
export const TERMINAL_NAME: RegExp = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const parameters: z.ZodType<TerminalOpenArgs> = z.strictObject({
  name: z.string().regex(TERMINAL_NAME).describe(
    "A name for the terminal, unique among yours (e.g. repl)",
  ),
  command: z.string().min(1).describe(
    "The command to run, as a bash command line (e.g. python3 -i)",
  ),
  cwd: z.string().min(1).optional().describe(
    "The absolute working directory (default: the workspace)",
  ),
  cols: z.number().int().min(20).max(500).optional().describe("Terminal width"),
  rows: z.number().int().min(5).max(200).optional().describe("Terminal height"),
});

/**
 * Creates `terminal_open` (`name`, `command`, `cwd?`, `cols?`, `rows?`): runs `bash -c <command>` on a new
 * pseudo-terminal owned by the calling agent (closed when the agent is disposed) and answers
 * `Opened terminal "<name>" (pid N): <command>`. Errors: a taken name, the per-agent cap, a cwd outside the
 * workspace. Mutating, serial, approval `policy`.
 */
export function createTerminalOpenTool(): ToolDefinition<TerminalOpenArgs> {
  return defineTool({
    name: "terminal_open",
    description:
      "Starts a long-running or interactive program (a REPL, a dev server) on a named terminal that stays " +
      "open across calls. Type into it with terminal_input, read its output with terminal_read, stop it with " +
      "terminal_close.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "policy",
    kind: "execute",
    async handler(args, run) {
      const terminals = seam(run.ctx, TerminalsKey, "terminal_open");
      if (args.cwd !== undefined) {
        requireAbsolute(args.cwd, "cwd", run.ctx.maybe(FsKey)?.dirs ?? []);
      }
      const info = await terminals.open(run.agent_id, args.name, ["bash", "-c", args.command], {
        ...(args.cwd === undefined ? {} : { cwd: args.cwd }),
        ...(args.cols === undefined ? {} : { cols: args.cols }),
        ...(args.rows === undefined ? {} : { rows: args.rows }),
      });
      return `Opened terminal "${info.name}" (pid ${info.pid}): ${args.command}`;
    },
  });
}
