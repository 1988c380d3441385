/**
 * The durable record of background jobs: `job/started` when one starts, `job/ended` when it ends (or is found lost
 * after a restart). Registered with the sessions service by the `jobs` row; they project nothing into the model's
 * history (the model learns of a job from Bash's result and of its end from a `context/injected` notice).
 *
 * @module
 */
import { defineEvent, type EmitEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";

/** Payload of {@linkcode JobStarted}. */
export interface JobStartedPayload {
  /** The job's id, unique within its session (`"1"`, `"2"`, …). */
  readonly job_id: string;
  /** The bash command line. */
  readonly command: string;
  /** Where its output is written. */
  readonly output_path: string;
  /** The id of the `Bash` call that started it, when a tool call did. */
  readonly call_id?: string | undefined;
}

/** Payload of {@linkcode JobEnded}. */
export interface JobEndedPayload {
  readonly job_id: string;
  /**
   * `exited` (on its own, or killed by a signal nobody here sent), `stopped` (TaskStop), `killed` (its agent was
   * disposed or evicted, or the host shut down) or `lost` (found unfinished after a restart).
   */
  readonly reason: "exited" | "stopped" | "killed" | "lost";
  /** The exit code (`128 + n` for signal `n`); null when lost. */
  readonly code: number | null;
  /** The signal that ended it, or null. */
  readonly signal: string | null;
  /** Milliseconds it ran; null when lost. */
  readonly duration_ms: number | null;
  /** Bytes of output it wrote, and how many the cap dropped from the file. */
  readonly output_bytes?: number | undefined;
  readonly dropped_bytes?: number | undefined;
}

/** `job/started` (durable): a background job started. */
export const JobStarted: EmitEvent<JobStartedPayload> = defineEvent("job/started", {
  mode: "emit",
  durable: true,
  owner: "@terret/exec",
  description:
    "A background job started (Bash run_in_background); written before the call is answered. Never projected " +
    "into the model's history.",
  payload: z.looseObject({
    job_id: z.string(),
    command: z.string(),
    output_path: z.string(),
    call_id: z.string().optional(),
  }) as z.ZodType<JobStartedPayload>,
});

/** `job/ended` (durable): a background job ended, was stopped or killed, or was found lost after a restart. */
export const JobEnded: EmitEvent<JobEndedPayload> = defineEvent("job/ended", {
  mode: "emit",
  durable: true,
  owner: "@terret/exec",
  description:
    "A background job ended: exited, stopped (TaskStop), killed (its agent disposed or evicted, the host shut " +
    "down) or lost (unfinished in the log after a restart). Never projected into the model's history.",
  payload: z.looseObject({
    job_id: z.string(),
    reason: z.enum(["exited", "stopped", "killed", "lost"]),
    code: z.number().int().nullable(),
    signal: z.string().nullable(),
    duration_ms: z.number().nullable(),
    output_bytes: z.number().int().optional(),
    dropped_bytes: z.number().int().optional(),
  }) as z.ZodType<JobEndedPayload>,
});

/** The jobs row's durable events. */
export const JOB_EVENTS: readonly EventDefinition[] = Object.freeze([
  JobStarted,
  JobEnded,
] as EventDefinition[]);
