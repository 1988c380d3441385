/**
 * The `subprocess` row: runs, spawns and pty-spawns programs through the sandbox, each in its own process group,
 * with an explicit environment and capped capture.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Logger, type Plugin } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type {
  ChildExit,
  ChildHandle,
  ConfinementRequest,
  ExitStatus,
  PtyHandle,
  PtySpawnOptions,
  RunOptions,
  RunResult,
  SpawnOptions,
  WrappedCommand,
} from "@terret/core/seams";
import { type Sandbox, SandboxKey, type Subprocess, SubprocessKey } from "@terret/core";
import { z } from "zod";
import { HeadTailCapture } from "./_capture.ts";
import { drain, feed, settleWithin } from "./_pipes.ts";
import { signalName } from "./_group.ts";
import { launchPiped, launchPty, ptyHostPermissions } from "./_launch.ts";
import { Supervision } from "./_supervise.ts";
import { buildSandbox } from "../sandbox/sandbox_providers.ts";

/** Config of the `subprocess` row. */
export interface SubprocessConfig {
  /** Host environment variables children inherit (when set on the host); nothing else is inherited. */
  readonly inherit_env: readonly string[];
  /** Fixed variables every child gets (after the inherited ones; a call's `env` wins over both). */
  readonly env: Readonly<Record<string, string>>;
  /** Bytes `run` keeps per stream by default (head and tail halves). */
  readonly max_output: number;
  /** Milliseconds a group leader gets between SIGTERM and SIGKILL. */
  readonly kill_grace_ms: number;
}

/** The host variables children inherit unless the row says otherwise. */
export const DEFAULT_INHERIT_ENV: readonly string[] = Object.freeze([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
]);

const schema: z.ZodType<SubprocessConfig, unknown> = z.object({
  inherit_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default([
    ...DEFAULT_INHERIT_ENV,
  ]).describe("Host environment variables children inherit; nothing else leaks from the host"),
  env: z.record(z.string(), z.string()).default({}).describe(
    "Fixed variables every child gets",
  ),
  max_output: z.number().int().min(0).default(1024 * 1024).describe(
    "Bytes run() keeps per stream (head and tail); the rest is dropped and counted",
  ),
  kill_grace_ms: z.number().int().min(0).default(2000).describe(
    "Milliseconds between SIGTERM and SIGKILL when a process group is killed",
  ),
});

const PIPE_SIGNALS: readonly Deno.Signal[] = ["SIGTERM"];
const PTY_SIGNALS: readonly Deno.Signal[] = ["SIGHUP", "SIGTERM"];

/** The {@linkcode Subprocess} implementation behind the `subprocess` row. */
export class SubprocessRunner implements Subprocess {
  readonly #sandbox: Sandbox;
  readonly #config: SubprocessConfig;
  readonly #logger: Logger;
  readonly #baseEnv: Readonly<Record<string, string>>;
  readonly #live = new Set<Supervision>();
  readonly #inflight = new Set<Promise<unknown>>();
  readonly #confined = new Set<SubprocessRunner>();
  #stopped = false;

  /**
   * @param sandbox wraps every argv before it is started
   * @param config the row's config (defaults applied)
   * @param logger where failures to signal a process group are reported
   */
  constructor(sandbox: Sandbox, config: SubprocessConfig, logger: Logger) {
    this.#sandbox = sandbox;
    this.#config = config;
    this.#logger = logger;
    const base: Record<string, string> = {};
    for (const name of config.inherit_env) {
      const value = readHostEnv(name);
      if (value !== undefined) base[name] = value;
    }
    this.#baseEnv = Object.freeze({ ...base, ...config.env });
  }

  /** The environment every child starts from (inherited allow list plus fixed values). */
  get baseEnv(): Readonly<Record<string, string>> {
    return this.#baseEnv;
  }

  /** Children (and pty programs) currently running. */
  get running(): number {
    return this.#live.size;
  }

  run(argv: readonly string[], options: RunOptions): Promise<RunResult> {
    return this.#track(this.#run(argv, options));
  }

  spawn(argv: readonly string[], options: SpawnOptions): Promise<ChildHandle> {
    return this.#track(this.#spawn(argv, options));
  }

  ptySpawn(argv: readonly string[], options: PtySpawnOptions): Promise<PtyHandle> {
    return this.#track(this.#ptySpawn(argv, options));
  }

  /** The sandbox every argv is wrapped by. */
  get sandbox(): Sandbox {
    return this.#sandbox;
  }

  /**
   * A runner over the sandbox `request` names (see `Subprocess.confine`), sharing this one's config; stopping this
   * runner stops it.
   */
  confine(request: ConfinementRequest): Promise<SubprocessRunner> {
    return this.#track((async () => {
      if (this.#stopped) {
        throw new TerretError(
          "ServiceStopped",
          `Cannot confine "${request.owner}": the subprocess service is stopped`,
        );
      }
      const sandbox = await buildSandbox(request);
      const runner = new SubprocessRunner(sandbox, this.#config, this.#logger);
      this.#confined.add(runner);
      if (this.#stopped) await runner.shutdown();
      return runner;
    })());
  }

  /** Stops accepting work, kills every running process group and waits for every call to settle. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#confined].map((runner) => runner.shutdown()));
    await Promise.all([...this.#live].map((supervision) => supervision.stop("cancel")));
    await Promise.allSettled([...this.#inflight]);
  }

  async #run(argv: readonly string[], options: RunOptions): Promise<RunResult> {
    this.#precheck(argv, options);
    const limit = options.maxOutput ?? this.#config.max_output;
    if (!Number.isInteger(limit) || limit < 0) {
      throw new RangeError(`Cannot run "${argv[0]}": maxOutput must be a non-negative integer`);
    }
    const stdinBytes = typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin;
    const { child, wrapped } = await launchPiped(this.#sandbox, argv, {
      cwd: options.cwd,
      env: this.#env(options.env),
      stdin: stdinBytes === undefined ? "null" : "piped",
      stderr: "piped",
    });
    const supervision = this.#supervise(child.pid, wrapped, child.status, options, PIPE_SIGNALS);
    const writing = stdinBytes === undefined ? Promise.resolve() : feed(child.stdin, stdinBytes);
    const stdout = new HeadTailCapture(limit);
    const stderr = new HeadTailCapture(limit);
    const drains = [drain(child.stdout, stdout), drain(child.stderr, stderr)];
    const status = await child.status;
    await this.#settle(supervision);
    // Everything in the group is dead now; a process that escaped it (setsid) may still hold a pipe open, so
    // the pipes get one grace period to reach EOF before they are cancelled.
    await settleWithin(Promise.all(drains.map((d) => d.done)), this.#config.kill_grace_ms);
    await Promise.all(drains.map((d) => d.cancel()));
    await writing;
    return {
      pid: child.pid,
      ...exitOf(status),
      timedOut: supervision.timedOut,
      cancelled: supervision.cancelled,
      stdout: stdout.text(),
      stderr: stderr.text(),
      truncated: { stdout: stdout.dropped, stderr: stderr.dropped },
    };
  }

  async #spawn(argv: readonly string[], options: SpawnOptions): Promise<ChildHandle> {
    this.#precheck(argv, options);
    const { child, wrapped } = await launchPiped(this.#sandbox, argv, {
      cwd: options.cwd,
      env: this.#env(options.env),
      stdin: options.stdin ?? "piped",
      stderr: options.stderr ?? "piped",
    });
    const supervision = this.#supervise(child.pid, wrapped, child.status, options, PIPE_SIGNALS);
    const status = this.#track((async (): Promise<ChildExit> => {
      const exit = exitOf(await child.status);
      await this.#settle(supervision);
      return { ...exit, timedOut: supervision.timedOut, cancelled: supervision.cancelled };
    })());
    return {
      pid: child.pid,
      stdin: options.stdin === "null" ? null : child.stdin,
      stdout: child.stdout,
      stderr: options.stderr === "null" ? null : child.stderr,
      status,
      kill: async () => {
        await supervision.stop("cancel");
        return await status;
      },
    };
  }

  async #ptySpawn(argv: readonly string[], options: PtySpawnOptions): Promise<PtyHandle> {
    this.#precheck(argv, options);
    const cols = options.cols ?? 80;
    const rows = options.rows ?? 24;
    if (!isSize(cols) || !isSize(rows)) {
      throw new RangeError(`Cannot open a ${cols}x${rows} terminal: expected positive integers`);
    }
    const { pty, wrapped, release } = await launchPty(this.#sandbox, argv, {
      cwd: options.cwd,
      env: this.#env(options.env),
      cols,
      rows,
    });
    const listeners = new Set<(data: string) => void>();
    let early: string[] | undefined = [];
    let open = true;
    let earlyLength = 0;
    const dataSubscription = pty.onData((data) => {
      if (early === undefined) {
        for (const listener of listeners) listener(data);
      } else if (earlyLength + data.length <= this.#config.max_output) {
        // Held for the first subscriber, up to max_output characters; a handle nobody reads drops the rest.
        early.push(data);
        earlyLength += data.length;
      }
    });
    const leaderExited = new Promise<ExitStatus>((resolve) => {
      const exitSubscription = pty.onExit(({ exitCode, signal }) => {
        open = false;
        exitSubscription.dispose();
        resolve(
          signal
            ? { code: 128 + signal, signal: signalName(signal), success: false }
            : { code: exitCode, signal: null, success: exitCode === 0 },
        );
      });
    });
    const supervision = this.#supervise(pty.pid, wrapped, leaderExited, options, PTY_SIGNALS);
    const exited = this.#track((async (): Promise<ExitStatus> => {
      const exit = await leaderExited;
      release();
      await this.#settle(supervision);
      dataSubscription.dispose();
      listeners.clear();
      return exit;
    })());
    return {
      pid: pty.pid,
      exited,
      onData(listener) {
        listeners.add(listener);
        if (early !== undefined) {
          const buffered = early;
          early = undefined;
          for (const data of buffered) listener(data);
        }
        return () => void listeners.delete(listener);
      },
      write(data) {
        if (open) pty.write(data);
      },
      resize(newCols, newRows) {
        if (!isSize(newCols) || !isSize(newRows)) {
          throw new RangeError(
            `Cannot resize the terminal to ${newCols}x${newRows}: expected positive integers`,
          );
        }
        if (open) pty.resize(newCols, newRows);
      },
      kill: async () => {
        await supervision.stop("cancel");
        return await exited;
      },
    };
  }

  #precheck(argv: readonly string[], options: { signal?: AbortSignal; timeout?: number }): void {
    if (this.#stopped) {
      throw new TerretError(
        "ServiceStopped",
        `Cannot spawn "${argv[0]}": the subprocess service is stopped`,
      );
    }
    options.signal?.throwIfAborted();
    const timeout = options.timeout;
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout >= 0)) {
      throw new RangeError(`Cannot spawn "${argv[0]}": timeout must be a non-negative number`);
    }
  }

  #supervise(
    pid: number,
    wrapped: WrappedCommand,
    leaderExited: Promise<unknown>,
    options: { signal?: AbortSignal; timeout?: number },
    first: readonly Deno.Signal[],
  ): Supervision {
    const supervision = new Supervision({
      pid,
      wrapped,
      leaderExited,
      graceMs: this.#config.kill_grace_ms,
      first,
      timeout: options.timeout,
      signal: options.signal,
      logger: this.#logger,
    });
    this.#live.add(supervision);
    if (this.#stopped) void supervision.stop("cancel");
    return supervision;
  }

  async #settle(supervision: Supervision): Promise<void> {
    await supervision.leaderExited();
    this.#live.delete(supervision);
  }

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#inflight.add(promise);
    const forget = () => void this.#inflight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  #env(extra: Readonly<Record<string, string>> | undefined): Record<string, string> {
    return { ...this.#baseEnv, ...extra };
  }
}

/**
 * Mounts the `subprocess` seam on the `sandbox` row: every argv is wrapped by the sandbox, every child runs in its
 * own process group, and stopping the row kills every process group it started and waits for them.
 *
 * **Permissions** (for `trt permissions`): `--allow-run` unscoped (spawning whatever the sandbox wraps, and
 * `Deno.kill` on process groups; node-pty silently fails to kill without it); `--allow-env` for the names in
 * `inherit_env` (read once at mount); and, for `ptySpawn` (node-pty, loaded on first use), `--allow-ffi` scoped to
 * node-pty's package directory plus unscoped `--allow-read` and `--allow-write` (node-pty opens the pty master as
 * a tty stream, a path-less access). A `LD_*`/`DYLD_*` variable in a child's env also needs unscoped
 * `--allow-run`. So a host with this row is not file-scoped: Deno's permissions cannot contain it, and the
 * sandbox row is what contains the programs.
 */
export const subprocessPlugin: Plugin<SubprocessConfig> = definePlugin({
  name: "subprocess",
  description:
    "Starts programs through the sandbox, in their own process groups, with capped capture",
  inject: [SandboxKey],
  provides: [SubprocessKey],
  config: schema,
  permissions(config): HostPermissions {
    return { ...ptyHostPermissions(), env: [...config.inherit_env] };
  },
  apply(ctx, config) {
    const runner = new SubprocessRunner(ctx.get(SandboxKey), config, ctx.logger);
    ctx.effect(() => () => runner.shutdown(), "subprocess shutdown");
    ctx.provide(SubprocessKey, runner);
  },
});

function readHostEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function exitOf(status: Deno.CommandStatus): ExitStatus {
  return { code: status.code, signal: status.signal, success: status.success };
}

function isSize(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}
