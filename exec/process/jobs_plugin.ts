/**
 * The `jobs` row: mounts the {@linkcode Jobs} seam on the subprocess row, grants its output directory read-only
 * through the fs seam, records jobs durably, kills an agent's jobs when it is disposed or evicted, and reports
 * the jobs a previous process left unfinished as lost. Durations are read on `agents.clock` when one is provided
 * (tests), else `performance.now`.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { isAbsolute, join } from "node:path";
import { AgentClockKey } from "@terret/core/agents";
import {
  AgentDisposed,
  type Agents,
  AgentsKey,
  CORE_ERRORS,
  type Sessions,
  SessionsKey,
  SubprocessKey,
  WorkspaceKey,
} from "@terret/core";
import { z } from "zod";
import { FsGrantsKey } from "../fs/fs_grants.ts";
import { type JobOwner, JobRegistry, JobsKey } from "./jobs.ts";
import { JobEnded, JobStarted } from "./job_events.ts";
import { reportLostJobs } from "./_lost_jobs.ts";

/** Config of the `jobs` row. */
export interface JobsConfig {
  /**
   * The jobs directory (`<path>/<agent_id>/<job_id>.log`), relative to `dir` unless absolute; kept across restarts.
   * Without it: a fresh temporary directory per process, removed when the row stops.
   */
  readonly path?: string | undefined;
  /** The directory a relative `path` is resolved against (the Terret home in the shipped bundle). */
  readonly dir?: string | undefined;
  /**
   * Hours an output file lives after its last write once its job is no longer listed (running, or among the agent's
   * last `keep_ended` ended jobs): older ones are removed when the row starts and about hourly while it runs.
   */
  readonly retain_hours: number;
  /** Running jobs one agent may have. */
  readonly max_jobs: number;
  /** Bytes one job's output file may hold (past it the oldest half is dropped). */
  readonly max_output_bytes: number;
  /** Ended jobs kept listed per agent. */
  readonly keep_ended: number;
  /** At start, report jobs the log shows started but never ended (a previous process died) as lost. */
  readonly report_lost: boolean;
  /** Variables set for every job (on top of the subprocess seam's environment). */
  readonly env: Readonly<Record<string, string>>;
}

const schema: z.ZodType<JobsConfig, unknown> = z.object({
  path: z.string().min(1).optional().describe(
    "The jobs directory (<path>/<agent_id>/<job_id>.log), relative to dir unless absolute, kept across " +
      "restarts; unset: a fresh temporary directory per process, removed when the row stops",
  ),
  dir: z.string().min(1).optional().describe("The directory a relative path is resolved against"),
  retain_hours: z.number().positive().default(168).describe(
    "Hours an output file lives after its last write once its job is no longer listed (running, or among the " +
      "agent's last keep_ended ended jobs); older ones are removed when the row starts and about hourly while it runs",
  ),
  max_jobs: z.number().int().positive().default(16).describe(
    "Running background jobs one agent may have",
  ),
  max_output_bytes: z.number().int().min(64).default(8 * 1024 * 1024).describe(
    "Bytes one job's output file may hold; past it the file keeps its newest half behind a dropped-bytes line",
  ),
  keep_ended: z.number().int().min(0).default(50).describe("Ended jobs kept listed per agent"),
  report_lost: z.boolean().default(true).describe(
    "At start, report jobs the log shows unfinished (the previous process died) as lost, with a notice",
  ),
  env: z.record(z.string(), z.string()).default({ PAGER: "cat", GIT_PAGER: "cat" }).describe(
    "Variables set for every job",
  ),
});

const WHY: Readonly<Record<string, string>> = {
  evicted: "its agent was evicted",
  disposed: "its agent was disposed",
  stopped: "the host shut down",
};

/**
 * Mounts `jobs`. A job is `bash -c <command>` on the subprocess seam (so the sandbox wraps it and it runs in its own
 * process group, killed with its group and the sandbox's tree); its stdout and stderr go, in arrival order, to
 * `<path>/<agent_id>/<job_id>.log` (a kept directory or a temporary one; the files of jobs no longer listed are
 * removed `retain_hours` after their last write, at start and about hourly), capped at `max_output_bytes`, and the
 * directory is granted read-only through `fs.grants` so the model reads it with `Read`. `job/started` and `job/ended` are registered as durable session
 * events; a job's end is announced as a steer (`input/queued`, wake false) to the agent when resident, else
 * appended to its session for its next rehydration. `agent/disposed` kills the agent's jobs; stopping the row
 * kills every job. Jobs are not durable: with `report_lost`, once the host has settled every session whose log
 * holds a `job/started` without a `job/ended` gets `job/ended` (`lost`) and the notice "job N was lost when the
 * host restarted".
 *
 * **Permissions**: read and write of the jobs directory (unscoped, and `TMPDIR`, when it is a temporary directory,
 * whose path is not known in advance); killing process groups needs the subprocess row's unscoped `--allow-run`.
 */
export const jobsPlugin: Plugin<JobsConfig> = definePlugin({
  name: "jobs",
  description:
    "Background jobs per agent (Bash run_in_background) on the subprocess seam, output in capped read-only files",
  inject: [SubprocessKey, SessionsKey, FsGrantsKey, WorkspaceKey],
  provides: [JobsKey],
  config: schema,
  permissions(config): HostPermissions {
    const path = jobsPath(config);
    return path === undefined
      ? { read: true, write: true, env: ["TMPDIR"] }
      : { read: [path], write: [path] };
  },
  async apply(ctx, config) {
    const sessions = ctx.get(SessionsKey);
    let root: string;
    const path = jobsPath(config);
    if (path === undefined) {
      root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-jobs-" }));
      ctx.effect(() => () => Deno.remove(root, { recursive: true }).catch(() => {}), "jobs: dir");
    } else {
      await Deno.mkdir(path, { recursive: true, mode: 0o700 });
      root = await Deno.realPath(path);
    }
    sessions.registerEventType(ctx, JobStarted, { projection: null });
    sessions.registerEventType(ctx, JobEnded, { projection: null });
    ctx.get(FsGrantsKey).grantReadOnly(ctx, root);
    const notify = (owner: JobOwner, text: string) =>
      notifyOwner(ctx.maybe(AgentsKey), sessions, owner, text);
    const jobs = new JobRegistry({
      subprocess: ctx.get(SubprocessKey),
      logger: ctx.logger,
      root,
      defaultCwd: ctx.get(WorkspaceKey).dirs[0],
      maxJobs: config.max_jobs,
      maxOutputBytes: config.max_output_bytes,
      keepEnded: config.keep_ended,
      graceMs: 2000,
      retainMs: config.retain_hours * 3_600_000,
      wallClock: () => Date.now(),
      env: config.env,
      now: () => ctx.maybe(AgentClockKey)?.now() ?? performance.now(),
      lastId: (sessionId) => lastJobId(sessions, sessionId),
      record: async (owner, type, payload) => {
        await sessions.append(owner.session_id, { type, payload });
      },
      notify,
    });
    // A kept directory may hold a previous process's output: what is past retain_hours goes before any job starts.
    if (path !== undefined) await jobs.prune();
    ctx.effect(() => {
      let pass: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        pass = pass.then(() => jobs.prune());
      }, pruneEvery(config.retain_hours));
      Deno.unrefTimer(timer);
      return async () => {
        clearInterval(timer);
        await pass;
      };
    }, "jobs: prune old output");
    ctx.effect(() => () => jobs.shutdown(), "jobs: shutdown");
    ctx.on(
      AgentDisposed,
      ({ agent_id, reason }) => jobs.stopAll(agent_id, WHY[reason ?? "disposed"]!),
    );
    if (config.report_lost) {
      const halt = Promise.withResolvers<boolean>();
      let stopped = false;
      const report = (async () => {
        if (!(await Promise.race([ctx.idle().then(() => true), halt.promise]))) return;
        await reportLostJobs({
          sessions,
          logger: ctx.logger,
          stopped: () => stopped,
          live: (sessionId, jobId) => jobs.hasLive(sessionId, jobId),
          notify,
        });
      })();
      ctx.effect(() => async () => {
        stopped = true;
        halt.resolve(false);
        await report;
      }, "jobs: lost-job report");
    }
    ctx.provide(JobsKey, jobs);
  },
});

/** The kept jobs directory the config names, or undefined for a temporary one. */
function jobsPath(config: JobsConfig): string | undefined {
  if (config.path === undefined) return undefined;
  return isAbsolute(config.path) ? config.path : join(config.dir ?? ".", config.path);
}

/** How often the running row prunes: a quarter of `retain_hours`, between a minute and an hour. */
function pruneEvery(retainHours: number): number {
  return Math.max(60_000, Math.min(3_600_000, (retainHours * 3_600_000) / 4));
}

/** The highest numeric `job_id` among the session's `job/started` events (0 when none). */
async function lastJobId(sessions: Sessions, sessionId: string): Promise<number> {
  const started = await sessions.read(sessionId, { types: [JobStarted.name] });
  let last = 0;
  for (const event of started) {
    const id = Number((event.payload as { job_id?: unknown }).job_id);
    if (Number.isSafeInteger(id) && id > last) last = id;
  }
  return last;
}

/**
 * Queues `text` for the owner's next step: `enqueue` on the resident agent driving the session (durable
 * `input/queued`, then in its inbox), else `input/queued` appended to the session, which the agent claims when it
 * is next made resident.
 */
async function notifyOwner(
  agents: Agents | undefined,
  sessions: Sessions,
  owner: JobOwner,
  text: string,
): Promise<void> {
  const agent = agents?.get(owner.agent_id);
  if (agent !== undefined && agent.session_id === owner.session_id) {
    try {
      await agent.enqueue({
        kind: "steer",
        content: text,
        wake: false,
      });
      return;
    } catch (error) {
      if (!CORE_ERRORS.is(error, "AgentDisposed")) throw error;
    }
  }
  await sessions.append(owner.session_id, {
    type: "input/queued",
    payload: { kind: "steer", content: text, wake: false },
  });
}
