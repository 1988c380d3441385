/**
 * `TaskStop`: stops one of the calling agent's background jobs, through the `jobs` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { type JobInfo, JobsKey } from "../process/jobs.ts";
import { seam } from "./_common.ts";

/** The arguments of `TaskStop` (Claude Code's: `task_id`, and the deprecated `shell_id`). */
export interface TaskStopArgs {
  readonly task_id?: string | number | undefined;
  readonly shell_id?: string | number | undefined;
}

const id = z.union([z.string().min(1), z.number().int().nonnegative()]);

const parameters: z.ZodType<TaskStopArgs> = z.strictObject({
  task_id: id.optional().describe(
    "The background task's id (from Bash's run_in_background answer)",
  ),
  shell_id: id.optional().describe("Deprecated: use task_id"),
});

/** How an ended job ended, in the notice's words: `exited 0 after 41 s`. */
export function jobOutcome(job: JobInfo): string {
  const seconds = `${Math.round(job.duration_ms / 1000)} s`;
  if (job.status === "stopped") return `was stopped after ${seconds}`;
  if (job.status === "killed") return `was killed after ${seconds}`;
  return job.signal === null
    ? `exited ${job.code} after ${seconds}`
    : `was killed by ${job.signal} after ${seconds}`;
}

/**
 * Creates `TaskStop` (`task_id`, or the deprecated `shell_id`): kills the calling agent's background job (its whole
 * process group, SIGTERM then SIGKILL) and answers `Stopped job N after S s; its output is in <file>`; a job that
 * had already ended answers how it ended (not an error). An unknown id, or no id, is an error that lists the
 * agent's jobs. Mutating, serial, approval `never` (it only ends what the agent itself started).
 */
export function createTaskStopTool(): ToolDefinition<TaskStopArgs> {
  return defineTool({
    name: "TaskStop",
    description:
      "Stops one of your background tasks (a Bash command started with run_in_background), killing it and " +
      "everything it started. Its output file stays readable.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "never",
    kind: "execute",
    async handler(args, run) {
      const jobs = seam(run.ctx, JobsKey, "TaskStop");
      const raw = args.task_id ?? args.shell_id;
      if (raw === undefined) {
        const running = jobs.list(run.agent_id).filter((job) => job.status === "running");
        throw new TypeError(
          `TaskStop needs a task_id (${
            running.length === 0
              ? "you have no running background tasks"
              : `your running tasks: ${
                running.map((job) => `${job.id} (${job.command})`).join(", ")
              }`
          })`,
        );
      }
      const wasRunning = jobs.get(run.agent_id, String(raw))?.status === "running";
      const job = await jobs.stop(run.agent_id, String(raw));
      if (!wasRunning || job.status !== "stopped") {
        return `job ${job.id} had already ended: it ${
          jobOutcome(job)
        }; its output is in ${job.output_path}`;
      }
      return `Stopped job ${job.id} after ${
        Math.round(job.duration_ms / 1000)
      } s; its output is in ${job.output_path}`;
    },
  });
}
