/**
 * `Bash`: a command in the calling agent's persistent shell session, through the `shell` seam (hence the sandbox).
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import type { ToolApproval } from "@terret/core/tools";
import { z } from "zod";
import { ShellKey } from "../process/shell.ts";
import { seam } from "./_common.ts";

/** Options of {@linkcode createBashTool} (the `tools.std` row's `bash` config plus the derived approval). */
export interface BashToolOptions {
  /** Derived from `sandbox.isolated` at registration: `always` outside a sandbox, `policy` inside. */
  readonly approval: ToolApproval;
  /** Milliseconds a command may run when the call gives no `timeout`. */
  readonly default_timeout_ms: number;
  /** The largest `timeout` a call may ask for. */
  readonly max_timeout_ms: number;
}

/** Bash's approval for a sandbox: `always` when programs run uncontained, `policy` inside an isolating sandbox. */
export function bashApproval(isolated: boolean): ToolApproval {
  return isolated ? "policy" : "always";
}

/**
 * Creates `Bash` (`command`, `timeout?` in ms, `description?`, `run_in_background?`,
 * `dangerouslyDisableSandbox?`). The command runs in the agent's persistent bash (keyed by agent id: `cd` and
 * `export` carry over), with stdin `/dev/null`. The answer is the terminal output (stdout and stderr interleaved,
 * capped head and tail by the shell row), `(no output)` when empty; a non-zero exit appends `Exit code N` and is an
 * error; a timeout kills the session (the next command starts a fresh one) and is an error naming it.
 * `run_in_background` and `dangerouslyDisableSandbox` are refused with a message. Mutating, serial; approval as
 * derived.
 */
export function createBashTool(options: BashToolOptions): ToolDefinition<BashArgs> {
  return defineTool({
    name: "Bash",
    description:
      "Runs a bash command in your persistent shell session (the working directory and exported variables " +
      "carry over between calls) and returns its output. Commands have no stdin. timeout is in milliseconds " +
      `(default ${options.default_timeout_ms}, at most ${options.max_timeout_ms}); a timed-out command is ` +
      "killed and the session restarts.",
    parameters: bashParameters(options.max_timeout_ms),
    mutating: true,
    concurrency: "serial",
    approval: options.approval,
    kind: "execute",
    async handler(args, run) {
      if (args.run_in_background === true) {
        throw new TypeError(
          "run_in_background is not supported yet (background jobs will arrive as job_start); run the command " +
            "in the foreground with a timeout, or open a terminal with terminal_open for a long-running program",
        );
      }
      if (args.dangerouslyDisableSandbox === true) {
        throw new TypeError(
          "dangerouslyDisableSandbox cannot be honoured: the sandbox is chosen by the harness's configuration",
        );
      }
      const shell = seam(run.ctx, ShellKey, "Bash");
      const timeout = args.timeout ?? options.default_timeout_ms;
      const result = await shell.run(run.agent_id, args.command, { timeout, signal: run.signal });
      const output = result.output === "" ? "(no output)" : result.output.replace(/\n$/, "");
      if (result.timedOut) {
        return {
          content:
            `${output}\n\nCommand timed out after ${timeout} ms and was killed; the shell session ` +
            "restarted, so the working directory and variables were reset",
          is_error: true,
        };
      }
      if (result.cancelled) {
        return {
          content: `${output}\n\nCommand was cancelled; the shell session restarted`,
          is_error: true,
        };
      }
      if (result.exitCode !== 0) {
        const ended = result.sessionEnded
          ? " (the shell exited; the next command starts a fresh session)"
          : "";
        return { content: `${output}\n\nExit code ${result.exitCode}${ended}`, is_error: true };
      }
      return output;
    },
  });
}

/** The arguments of `Bash`. */
export interface BashArgs {
  readonly command: string;
  readonly timeout?: number | undefined;
  readonly description?: string | undefined;
  readonly run_in_background?: boolean | undefined;
  readonly dangerouslyDisableSandbox?: boolean | undefined;
}

function bashParameters(maxTimeout: number): z.ZodType<BashArgs> {
  return z.strictObject({
    command: z.string().min(1).describe("The bash command to run"),
    timeout: z.number().int().min(1).max(maxTimeout).optional().describe(
      `Milliseconds before the command is killed (at most ${maxTimeout})`,
    ),
    description: z.string().optional().describe(
      "What the command does, in a few words (for humans)",
    ),
    run_in_background: z.boolean().optional().describe("Not supported yet: always refused"),
    dangerouslyDisableSandbox: z.boolean().optional().describe(
      "Not honoured: always refused when true",
    ),
  });
}
