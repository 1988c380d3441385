/**
 * The `shell` row: one persistent bash per key (an agent id) on the subprocess seam's pty, so `cd` and `export`
 * carry from one command to the next.
 *
 * @module
 */
import {
  definePlugin,
  defineService,
  type HostPermissions,
  type Plugin,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { AgentDisposed, type Subprocess, SubprocessKey, WorkspaceKey } from "@terret/core";
import { z } from "zod";
import { ShellSession } from "./_shell_session.ts";
import { ptyHostPermissions } from "./_launch.ts";

/** Options of {@linkcode Shell.run}. */
export interface ShellRunOptions {
  /** Milliseconds before the command (and with it the session) is killed (default: the row's `timeout_ms`). */
  readonly timeout?: number;
  /** Kills the command (and with it the session) when aborted. */
  readonly signal?: AbortSignal;
  /** Bytes of output kept, head and tail (default: the row's `max_output`). */
  readonly maxOutput?: number;
  /** Where a NEW session starts (default: the row's `cwd`, else the first granted workspace directory). */
  readonly cwd?: string;
}

/** What {@linkcode Shell.run} returns. */
export interface ShellResult {
  /** What the command printed (stdout and stderr as a terminal shows them), with a marker where bytes were cut. */
  readonly output: string;
  /** Bytes the output cap dropped. */
  readonly truncated: number;
  /** The command's exit status (bash's own when the command ended the shell); null when it was killed. */
  readonly exitCode: number | null;
  /** True when the timeout killed the command and its session. */
  readonly timedOut: boolean;
  /** True when the signal, `close` or the row's shutdown killed the command and its session. */
  readonly cancelled: boolean;
  /** True when this command ran in a session started for it (no `cd`/`export` carried over). */
  readonly freshSession: boolean;
  /** True when the session is gone after this command; the next command starts a fresh one. */
  readonly sessionEnded: boolean;
}

/**
 * Persistent shells, one per key.
 *
 * Contract: commands for one key run one at a time, in call order, in the same bash, so working directory,
 * exported variables and shell options persist; a command's stdin is `/dev/null`. The end of a command is
 * detected by a per-command random sentinel its output cannot forge. A command that times out or is cancelled
 * kills the session's whole process group and the next command gets a fresh session (`freshSession`); a session
 * is never reused in an unknown state. Output is capped. `run` rejects with the sandbox's `Denied` for a start
 * directory outside the workspace, `ShellFailed` when bash cannot start, `ServiceStopped` after the row stopped.
 */
export interface Shell {
  /** Runs `command` in the key's session, starting one when there is none. */
  run(key: string, command: string, options?: ShellRunOptions): Promise<ShellResult>;
  /** Kills the key's session (a running command resolves as cancelled); idempotent. */
  close(key: string): Promise<void>;
  /** The keys with a live session. */
  keys(): string[];
}

/** The shell service key (config row `shell`). */
export const ShellKey: ServiceKey<Shell> = defineService<Shell>(
  "shell",
  "Persistent bash sessions, one per agent, on the subprocess seam",
);

/** Config of the `shell` row. */
export interface ShellConfig {
  /** The bash to run (a name looked up on the child's PATH, or a path). */
  readonly bash: string;
  /** Default milliseconds before a command is killed. */
  readonly timeout_ms: number;
  /** Default bytes of output kept per command. */
  readonly max_output: number;
  /** Where sessions start (default: the first granted workspace directory). */
  readonly cwd?: string | undefined;
  /** Variables set in every session (on top of the subprocess seam's environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Terminal width. */
  readonly cols: number;
  /** Terminal height. */
  readonly rows: number;
  /** Milliseconds bash gets to come up. */
  readonly start_timeout_ms: number;
}

const schema: z.ZodType<ShellConfig, unknown> = z.object({
  bash: z.string().min(1).default("bash").describe("The bash program"),
  timeout_ms: z.number().int().positive().default(120_000).describe(
    "Default milliseconds before a command (and its session) is killed",
  ),
  max_output: z.number().int().min(0).default(32_768).describe(
    "Default bytes of output kept per command (head and tail)",
  ),
  cwd: z.string().optional().describe(
    "Where sessions start (default: the first granted workspace directory)",
  ),
  env: z.record(z.string(), z.string()).default({
    TERM: "dumb",
    PAGER: "cat",
    GIT_PAGER: "cat",
  }).describe("Variables set in every session"),
  cols: z.number().int().positive().default(200).describe("Terminal width"),
  rows: z.number().int().positive().default(50).describe("Terminal height"),
  start_timeout_ms: z.number().int().positive().default(10_000).describe(
    "Milliseconds bash gets to come up",
  ),
});

/** The {@linkcode Shell} implementation behind the `shell` row. */
export class ShellSessions implements Shell {
  readonly #subprocess: Subprocess;
  readonly #config: ShellConfig;
  readonly #defaultCwd: string | undefined;
  readonly #sessions = new Map<string, ShellSession>();
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #closing = new Map<string, Promise<void>>();
  readonly #cancelled = new WeakSet<ShellSession>();
  readonly #epochs = new Map<string, number>();
  #stopped = false;

  /**
   * @param subprocess starts bash (through the sandbox, `tty: true`)
   * @param config the row's config (defaults applied)
   * @param defaultCwd where sessions start when neither the call nor the row says
   */
  constructor(subprocess: Subprocess, config: ShellConfig, defaultCwd: string | undefined) {
    this.#subprocess = subprocess;
    this.#config = config;
    this.#defaultCwd = defaultCwd;
  }

  run(key: string, command: string, options: ShellRunOptions = {}): Promise<ShellResult> {
    if (this.#stopped) {
      return Promise.reject(
        new TerretError(
          "ServiceStopped",
          `Cannot run a command for "${key}": the shell service is stopped`,
        ),
      );
    }
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.#run(key, command, options));
    const tail = next.catch(() => {});
    this.#queues.set(key, tail);
    void tail.then(() => {
      if (this.#queues.get(key) === tail) this.#queues.delete(key);
    });
    return next;
  }

  close(key: string): Promise<void> {
    if (this.#queues.has(key)) this.#epochs.set(key, (this.#epochs.get(key) ?? 0) + 1);
    else this.#epochs.delete(key);
    const closing = this.#closing.get(key);
    if (closing !== undefined) return closing;
    const session = this.#sessions.get(key);
    if (session === undefined) return Promise.resolve();
    this.#cancelled.add(session);
    const done = session.kill().finally(() => {
      this.#closing.delete(key);
      if (this.#sessions.get(key) === session) this.#sessions.delete(key);
    });
    this.#closing.set(key, done);
    return done;
  }

  keys(): string[] {
    return [...this.#sessions.keys()];
  }

  /** Stops accepting commands and kills every session, waiting for queued commands to settle. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.keys().map((key) => this.close(key)));
    await Promise.allSettled([...this.#queues.values()]);
    await Promise.all(this.keys().map((key) => this.close(key)));
  }

  async #run(key: string, command: string, options: ShellRunOptions): Promise<ShellResult> {
    if (this.#stopped) {
      throw new TerretError(
        "ServiceStopped",
        `Cannot run a command for "${key}": the shell service is stopped`,
      );
    }
    options.signal?.throwIfAborted();
    const timeout = options.timeout ?? this.#config.timeout_ms;
    const maxOutput = options.maxOutput ?? this.#config.max_output;
    if (!(Number.isFinite(timeout) && timeout >= 0)) {
      throw new RangeError(
        `Cannot run a command for "${key}": timeout must be a non-negative number`,
      );
    }
    if (!Number.isInteger(maxOutput) || maxOutput < 0) {
      throw new RangeError(
        `Cannot run a command for "${key}": maxOutput must be a non-negative integer`,
      );
    }
    let session = this.#sessions.get(key);
    const fresh = session === undefined || session.ended;
    if (session === undefined || session.ended) {
      const epoch = this.#epochs.get(key);
      session = await this.#start(key, options.cwd);
      if (this.#epochs.get(key) !== epoch || options.signal?.aborted) {
        // Closed (or cancelled) while bash was starting: the new session never runs the command.
        this.#cancelled.add(session);
        await this.close(key);
        return {
          output: "",
          truncated: 0,
          exitCode: null,
          timedOut: false,
          cancelled: true,
          freshSession: true,
          sessionEnded: true,
        };
      }
    }
    const live = session;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void this.close(key);
    }, timeout);
    const onAbort = () => void this.close(key);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const outcome = await live.run(command, maxOutput);
      const cancelled = !timedOut && this.#cancelled.has(live);
      if (outcome.sessionEnded) {
        await this.#closing.get(key);
        if (this.#sessions.get(key) === live) this.#sessions.delete(key);
      }
      return {
        output: outcome.output,
        truncated: outcome.truncated,
        exitCode: timedOut || cancelled ? null : outcome.exitCode,
        timedOut,
        cancelled,
        freshSession: fresh,
        sessionEnded: outcome.sessionEnded,
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  async #start(key: string, cwd: string | undefined): Promise<ShellSession> {
    const dir = cwd ?? this.#config.cwd ?? this.#defaultCwd;
    if (dir === undefined) {
      throw new TerretError(
        "Denied",
        `Cannot start a shell for "${key}": no workspace directory is granted`,
      );
    }
    const session = await ShellSession.start(this.#subprocess, {
      bash: this.#config.bash,
      cwd: dir,
      env: this.#config.env,
      cols: this.#config.cols,
      rows: this.#config.rows,
      startTimeoutMs: this.#config.start_timeout_ms,
    });
    if (this.#stopped) {
      await session.kill();
      throw new TerretError(
        "ServiceStopped",
        `Cannot run a command for "${key}": the shell service is stopped`,
      );
    }
    this.#sessions.set(key, session);
    return session;
  }
}

/**
 * Mounts the `shell` seam on the `subprocess` row: one persistent bash per key, started through the sandbox with
 * `tty: true`. An agent's disposal (`agent/disposed`) kills the session keyed by its id; stopping the row kills
 * every session.
 *
 * **Permissions** (for `trt permissions`): those of the `subprocess` row's `ptySpawn`, which every session
 * needs — `--allow-ffi` scoped to node-pty, unscoped `--allow-read`, `--allow-write` and `--allow-run` (see
 * `subprocessPlugin`) — and `bash` reachable on the child's `PATH` (inside the container under docker).
 */
export const shellPlugin: Plugin<ShellConfig> = definePlugin({
  name: "shell",
  description: "Persistent bash sessions, one per agent, on the subprocess seam",
  inject: [SubprocessKey, WorkspaceKey],
  provides: [ShellKey],
  config: schema,
  permissions(): HostPermissions {
    return ptyHostPermissions();
  },
  apply(ctx, config) {
    const shell = new ShellSessions(
      ctx.get(SubprocessKey),
      config,
      ctx.get(WorkspaceKey).dirs[0],
    );
    ctx.effect(() => () => shell.shutdown(), "shell shutdown");
    ctx.on(AgentDisposed, ({ agent_id }) => shell.close(agent_id));
    ctx.provide(ShellKey, shell);
  },
});
