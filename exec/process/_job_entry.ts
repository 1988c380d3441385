/**
 * One background job as the jobs registry holds it, its public view and the notice its end queues. Internal to
 * the `jobs` row.
 *
 * @module
 */
import type { ChildExit, ChildHandle } from "@terret/core/seams";
import type { JobOutput } from "./_job_output.ts";
import type { JobInfo, JobOwner } from "./jobs.ts";

/** One job as the registry holds it. */
export interface Entry {
  readonly id: string;
  readonly owner: JobOwner;
  readonly command: string;
  readonly output_path: string;
  readonly startedAt: number;
  handle: ChildHandle | undefined;
  output: JobOutput | undefined;
  exit: ChildExit | undefined;
  endedAt: number | undefined;
  /** Why it was ended from here (`stopped` by the model, `killed` with a note), first reason wins. */
  ending: { readonly status: "stopped" | "killed"; readonly why?: string } | undefined;
  done: Promise<void> | undefined;
}

/** The notice a job's end queues: `job 3 exited 0 after 41 s (…)`. */
export function notice(entry: Entry, exit: ChildExit, durationMs: number): string {
  const seconds = `${Math.round(durationMs / 1000)} s`;
  const command = entry.command.length > 200 ? `${entry.command.slice(0, 200)}…` : entry.command;
  const how = entry.ending?.status === "killed"
    ? `was killed after ${seconds}: ${entry.ending.why}`
    : exit.signal === null
    ? `exited ${exit.code} after ${seconds}`
    : `was killed by ${exit.signal} after ${seconds}`;
  return `job ${entry.id} ${how} (command: ${command}; output: ${entry.output_path})`;
}

/** The public view of a job at `now`. */
export function info(entry: Entry, now: number): JobInfo {
  const status = entry.exit === undefined ? "running" : entry.ending?.status ?? "exited";
  return {
    id: entry.id,
    agent_id: entry.owner.agent_id,
    session_id: entry.owner.session_id,
    command: entry.command,
    output_path: entry.output_path,
    pid: entry.handle?.pid ?? 0,
    status,
    code: entry.exit?.code ?? null,
    signal: entry.exit?.signal ?? null,
    duration_ms: Math.round((entry.endedAt ?? now) - entry.startedAt),
  };
}
