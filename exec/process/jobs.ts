/**
 * The `jobs` seam: background jobs per agent (`Bash` with `run_in_background`), each a `bash -c` child started
 * through the subprocess seam (hence the sandbox) in its own process group, its output in a capped file the model
 * reads with `Read`.
 *
 * @module
 */
import { defineService, type Logger, type ServiceKey } from "@terret/hames";
import type { Subprocess } from "@terret/core";
import { TerretError } from "../errors.ts";
import { drainInto, JobOutput } from "./_job_output.ts";
import { type Entry, info, notice } from "./_job_entry.ts";
import { settleWithin } from "./_pipes.ts";
import { pruneJobOutputs } from "./_job_pruning.ts";
import type { JobEndedPayload, JobStartedPayload } from "./job_events.ts";

/** Who a job belongs to: the agent that started it and the session it drives. */
export interface JobOwner {
  readonly agent_id: string;
  readonly session_id: string;
}

/** Options of {@linkcode Jobs.start}. */
export interface JobStartOptions {
  /** The working directory (default: the first granted workspace directory). */
  readonly cwd?: string | undefined;
  /** The id of the tool call starting it (recorded in `job/started`). */
  readonly call_id?: string | undefined;
}

/** A job as {@linkcode Jobs.list} shows it. */
export interface JobInfo {
  /** Unique within the owner's session (`"1"`, `"2"`, …). */
  readonly id: string;
  readonly agent_id: string;
  readonly session_id: string;
  readonly command: string;
  /** The output file (stdout and stderr in arrival order, capped). */
  readonly output_path: string;
  /** The host pid of the job's `bash` (its process group id). */
  readonly pid: number;
  /** `running`, or how it ended (see `job/ended`'s `reason`). */
  readonly status: "running" | "exited" | "stopped" | "killed";
  /** The exit code (`128 + n` for signal `n`), null while running. */
  readonly code: number | null;
  /** The signal that ended it, or null. */
  readonly signal: string | null;
  /** Milliseconds it has run (so far, while running). */
  readonly duration_ms: number;
}

/**
 * Background jobs per agent.
 *
 * Contract: `start` answers once the job runs and its `job/started` is durable (a failed append kills it and
 * rejects). A job survives the turn and the call that started it; it ends on its own, by `stop`, by `stopAll` (its
 * agent was disposed or evicted) or when the row stops, and every end is recorded (`job/ended`) and — unless the
 * model asked for it with `stop` — announced to the owner's session as a steer (`input/queued`, claimed as
 * `context/injected` at the agent's next step). Killing a job kills its whole process group (SIGTERM, then SIGKILL
 * after the subprocess row's grace) and the sandbox's tree (the wrapped command's hook); when its `bash` exits on
 * its own, whatever is left of its group is killed. A process that left the group (`setsid`) is not reached on the
 * host. `stop` of an unknown id rejects with `JobNotFound`; more than `max_jobs` running jobs per agent with
 * `JobCapExceeded`; after the row stopped with `ServiceStopped`.
 */
export interface Jobs {
  /** Starts `bash -c <command>` for `owner`. */
  start(owner: JobOwner, command: string, options?: JobStartOptions): Promise<JobInfo>;
  /** Stops a job (idempotent once ended); resolves with how it ended. */
  stop(agentId: string, jobId: string): Promise<JobInfo>;
  /** One job of the agent, or undefined. */
  get(agentId: string, jobId: string): JobInfo | undefined;
  /** The agent's jobs (running and recently ended), in start order. */
  list(agentId: string): JobInfo[];
  /** Kills every running job of the agent (`killed`, `why` in the notice) and forgets its jobs. */
  stopAll(agentId: string, why: string): Promise<void>;
  /** The directory the agent's job output goes to (granted read-only by the fs seam). */
  dirOf(agentId: string): string;
  /**
   * Removes the output files of jobs no longer listed (neither running nor among an agent's last `keep_ended` ended
   * ones) last written more than `retain_hours` ago; resolves with how many it removed. The row runs it when it
   * starts (a kept directory) and about hourly while it runs. Never rejects (failures are logged).
   */
  prune(): Promise<number>;
}

/** The most job ids one start skips for output files left without their job in the log (see `#claimOutput`). */
const MAX_ID_SKIPS = 100;

/** The jobs service key (config row `jobs`). */
export const JobsKey: ServiceKey<Jobs> = defineService<Jobs>(
  "jobs",
  "Background jobs per agent on the subprocess seam, output in capped read-only files",
);

/** What {@linkcode JobRegistry} needs from its row. */
export interface JobHost {
  readonly subprocess: Subprocess;
  readonly logger: Logger;
  /** The jobs root: each agent writes below `<root>/<agent_id>/`. */
  readonly root: string;
  readonly defaultCwd: string | undefined;
  readonly maxJobs: number;
  readonly maxOutputBytes: number;
  /** Ended jobs kept listed per agent. */
  readonly keepEnded: number;
  /** Milliseconds the pipes get to close after the job's group died. */
  readonly graceMs: number;
  /** Milliseconds an unlisted job's output file lives after its last write. */
  readonly retainMs: number;
  /** The wall clock (epoch milliseconds) file times are compared with. */
  wallClock(): number;
  readonly env: Readonly<Record<string, string>>;
  /** A millisecond clock (durations). */
  now(): number;
  /** The highest job id the session's log holds (0 for none). */
  lastId(sessionId: string): Promise<number>;
  /** Appends a durable event to the owner's session. */
  record(
    owner: JobOwner,
    type: "job/started" | "job/ended",
    payload: JobStartedPayload | JobEndedPayload,
  ): Promise<void>;
  /** Queues a notice for the owner's next step. */
  notify(owner: JobOwner, text: string): Promise<void>;
}

/** The {@linkcode Jobs} implementation behind the `jobs` row. */
export class JobRegistry implements Jobs {
  readonly #host: JobHost;
  readonly #agents = new Map<string, Map<string, Entry>>();
  readonly #counters = new Map<string, Promise<{ next: number }>>();
  #stopped = false;

  /** @param host what the row provides */
  constructor(host: JobHost) {
    this.#host = host;
  }

  dirOf(agentId: string): string {
    return `${this.#host.root}/${agentId}`;
  }

  prune(): Promise<number> {
    const listed = new Set<string>();
    for (const jobs of this.#agents.values()) {
      for (const entry of jobs.values()) listed.add(entry.output_path);
    }
    return pruneJobOutputs(
      this.#host.root,
      this.#host.wallClock() - this.#host.retainMs,
      listed,
      this.#host.logger,
    );
  }

  async start(owner: JobOwner, command: string, options: JobStartOptions = {}): Promise<JobInfo> {
    if (typeof command !== "string" || command.trim() === "") {
      throw new TypeError("Cannot start a job: the command must be a non-empty string");
    }
    this.#assertLive(command);
    const running = this.list(owner.agent_id).filter((job) => job.status === "running").length;
    if (running >= this.#host.maxJobs) {
      throw new TerretError(
        "JobCapExceeded",
        `Cannot start a job: ${running} jobs are running, the limit is ${this.#host.maxJobs} (stop one with TaskStop)`,
      );
    }
    const cwd = options.cwd ?? this.#host.defaultCwd;
    if (cwd === undefined) {
      throw new TerretError("Denied", "Cannot start a job: no workspace directory is granted");
    }
    const dir = this.dirOf(owner.agent_id);
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const { id, output } = await this.#claimOutput(owner.session_id, dir);
    const entry: Entry = {
      id,
      owner,
      command,
      output_path: `${dir}/${id}.log`,
      startedAt: this.#host.now(),
      handle: undefined,
      output: undefined,
      exit: undefined,
      endedAt: undefined,
      ending: undefined,
      done: undefined,
    };
    entry.output = output;
    try {
      this.#assertLive(command);
      entry.handle = await this.#host.subprocess.spawn(["bash", "-c", command], {
        cwd,
        env: this.#host.env,
        stdin: "null",
        stderr: "piped",
      });
    } catch (error) {
      await entry.output.close();
      throw error;
    }
    const jobs = this.#agents.get(owner.agent_id) ?? new Map<string, Entry>();
    jobs.set(id, entry);
    this.#agents.set(owner.agent_id, jobs);
    const started = this.#host.record(owner, "job/started", {
      job_id: id,
      command,
      output_path: entry.output_path,
      ...(options.call_id === undefined ? {} : { call_id: options.call_id }),
    });
    entry.done = this.#watch(entry, started);
    try {
      await started;
    } catch (error) {
      entry.ending ??= { status: "killed", why: "its start could not be recorded" };
      await entry.handle.kill();
      await entry.done;
      throw error;
    }
    if (this.#stopped) await this.#end(entry, { status: "killed", why: "the host shut down" });
    return info(entry, this.#host.now());
  }

  async stop(agentId: string, jobId: string): Promise<JobInfo> {
    const entry = this.#agents.get(agentId)?.get(jobId);
    if (entry === undefined) {
      const known = this.list(agentId).map((job) => `${job.id} (${job.status})`);
      throw new TerretError(
        "JobNotFound",
        `Cannot stop job "${jobId}": no such job (${
          known.length === 0 ? "you have no jobs" : `your jobs: ${known.join(", ")}`
        })`,
      );
    }
    await this.#end(entry, { status: "stopped" });
    return info(entry, this.#host.now());
  }

  get(agentId: string, jobId: string): JobInfo | undefined {
    const entry = this.#agents.get(agentId)?.get(jobId);
    return entry === undefined ? undefined : info(entry, this.#host.now());
  }

  list(agentId: string): JobInfo[] {
    const now = this.#host.now();
    return [...(this.#agents.get(agentId)?.values() ?? [])].map((entry) => info(entry, now));
  }

  /** True when this process runs (or ran) the session's job `jobId`: it cannot have been lost. */
  hasLive(sessionId: string, jobId: string): boolean {
    for (const jobs of this.#agents.values()) {
      const entry = jobs.get(jobId);
      if (entry?.owner.session_id === sessionId) return true;
    }
    return false;
  }

  async stopAll(agentId: string, why: string): Promise<void> {
    const jobs = this.#agents.get(agentId);
    if (jobs === undefined) return;
    await Promise.all(
      [...jobs.values()].map((entry) => this.#end(entry, { status: "killed", why })),
    );
    if (this.#agents.get(agentId) === jobs) this.#agents.delete(agentId);
  }

  /** Stops accepting jobs and kills every running one (`the host shut down`). */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    await Promise.all(
      [...this.#agents.keys()].map((agent) => this.stopAll(agent, "the host shut down")),
    );
  }

  #assertLive(command: string): void {
    if (this.#stopped) {
      throw new TerretError(
        "ServiceStopped",
        `Cannot start job ${JSON.stringify(command.slice(0, 80))}: the jobs service is stopped`,
      );
    }
  }

  /**
   * The next job id of the session and its output file, created new. An id's file can exist without its job in the
   * log: a process that died after creating it and before `job/started` was durable (its job may even run on,
   * orphaned, writing to it). That file is left as it is and the next id is taken.
   */
  async #claimOutput(sessionId: string, dir: string): Promise<{ id: string; output: JobOutput }> {
    for (let attempt = 1;; attempt++) {
      const id = await this.#reserve(sessionId);
      try {
        return {
          id,
          output: await JobOutput.create(`${dir}/${id}.log`, this.#host.maxOutputBytes),
        };
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists) || attempt >= MAX_ID_SKIPS) throw error;
      }
    }
  }

  async #reserve(sessionId: string): Promise<string> {
    let counter = this.#counters.get(sessionId);
    if (counter === undefined) {
      counter = this.#host.lastId(sessionId).then((last) => ({ next: last + 1 }));
      this.#counters.set(sessionId, counter);
      counter.catch(() => this.#counters.delete(sessionId));
    }
    const state = await counter;
    return String(state.next++);
  }

  async #end(entry: Entry, ending: NonNullable<Entry["ending"]>): Promise<void> {
    if (entry.exit === undefined) {
      entry.ending ??= ending;
      await entry.handle?.kill();
    }
    await entry.done;
  }

  /** Drains the job's output into its file, then records its end and tells its owner. */
  async #watch(entry: Entry, started: Promise<void>): Promise<void> {
    const handle = entry.handle!;
    const output = entry.output!;
    const drains = [handle.stdout, handle.stderr].filter((s) => s !== null).map((stream) =>
      drainInto(stream, output)
    );
    const exit = await handle.status;
    await settleWithin(Promise.all(drains.map((d) => d.done)), this.#host.graceMs);
    await Promise.all(drains.map((d) => d.cancel()));
    await output.close();
    entry.exit = exit;
    entry.endedAt = this.#host.now();
    if (output.failure !== undefined) {
      this.#host.logger.log("error", `Cannot write the output of job ${entry.id}`, {
        path: entry.output_path,
        error: output.failure,
      });
    }
    if (!(await started.then(() => true, () => false))) return;
    const status = entry.ending?.status ?? "exited";
    const duration = entry.endedAt - entry.startedAt;
    try {
      await this.#host.record(entry.owner, "job/ended", {
        job_id: entry.id,
        reason: status,
        code: exit.code,
        signal: exit.signal,
        duration_ms: Math.round(duration),
        output_bytes: output.written,
        dropped_bytes: output.dropped,
      });
      if (status !== "stopped") await this.#host.notify(entry.owner, notice(entry, exit, duration));
    } catch (error) {
      this.#host.logger.log("error", `Cannot record the end of job ${entry.id}`, {
        agent_id: entry.owner.agent_id,
        error,
      });
    }
    this.#trim(entry.owner.agent_id);
  }

  /** Forgets the oldest ended jobs past `keepEnded`. */
  #trim(agentId: string): void {
    const jobs = this.#agents.get(agentId);
    if (jobs === undefined) return;
    const ended = [...jobs.values()].filter((entry) => entry.endedAt !== undefined);
    for (const entry of ended.slice(0, Math.max(0, ended.length - this.#host.keepEnded))) {
      jobs.delete(entry.id);
    }
  }
}
