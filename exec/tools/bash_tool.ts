/**
 * `Bash`: a command in the calling agent's persistent shell session, through the `shell` seam (hence the sandbox).
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import type { ToolApproval } from "@terret/core/tools";
import { z } from "zod";
import { type Shell, ShellKey } from "../process/shell.ts";
import { JobsKey } from "../process/jobs.ts";
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
 * With `run_in_background: true` the command starts as a background job on the `jobs` seam (in the shell's current
 * directory when the agent has a shell, else the workspace; `timeout` does not apply) and the answer is at once
 * `Command running in background with ID: N. Output is being written to: <file>` — the model reads the file with
 * `Read` and stops the job with `TaskStop`; its end arrives as a notice at a later step. Without a `jobs` row that
 * is an error naming it. `dangerouslyDisableSandbox` is refused with a message. Mutating, serial; approval as
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
      if (args.dangerouslyDisableSandbox === true) {
        throw new TypeError(
          "dangerouslyDisableSandbox cannot be honoured: the sandbox is chosen by the harness's configuration",
        );
      }
      const shell = seam(run.ctx, ShellKey, "Bash");
      if (args.run_in_background === true) {
        const jobs = seam(run.ctx, JobsKey, "Bash with run_in_background");
        const cwd = await shellCwd(shell, run.agent_id, run.signal);
        const job = await jobs.start(
          { agent_id: run.agent_id, session_id: run.session_id },
          args.command,
          {
            cwd,
            call_id: run.call_id,
          },
        );
        return `Command running in background with ID: ${job.id}. Output is being written to: ` +
          `${job.output_path}\n(Read that file for its output; stop the job with TaskStop {"task_id": ` +
          `"${job.id}"}; you will be told when it ends.)`;
      }
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

/** The agent's shell's current directory when it has a live shell (`pwd -P`), else undefined (the workspace). */
async function shellCwd(
  shell: Shell,
  agentId: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (!shell.keys().includes(agentId)) return undefined;
  const result = await shell.run(agentId, "pwd -P", { timeout: 10_000, signal });
  const cwd = result.output.trim();
  return result.exitCode === 0 && cwd.startsWith("/") && !cwd.includes("\n") ? cwd : undefined;
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
    run_in_background: z.boolean().optional().describe(
      "Run as a background job: answers at once with its task id and output file (see TaskStop)",
    ),
    dangerouslyDisableSandbox: z.boolean().optional().describe(
      "Not honoured: always refused when true",
    ),
  });
}
