/**
 * The `subprocess` seam: how Terret starts programs. Declared in core (the MCP client spawns stdio servers through
 * it) and implemented by `@terret/exec`. Every argv passes `sandbox.wrap` before it becomes a process.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";
import type { ConfinementRequest } from "./sandbox.ts";

/** How a process ended. */
export interface ExitStatus {
  /** The exit code; `128 + n` when signal `n` ended the process. */
  readonly code: number;
  /** The signal that ended the process (`"SIGKILL"`), or `null` when it exited on its own. */
  readonly signal: string | null;
  /** True when the process exited with code 0 and no signal. */
  readonly success: boolean;
}

/** How a child stopped, beyond its exit status. */
export interface ChildExit extends ExitStatus {
  /** True when the `timeout` elapsed and the seam killed the process group. */
  readonly timedOut: boolean;
  /** True when the child was stopped on request: the `signal` aborted, `kill()` was called, or the seam shut down. */
  readonly cancelled: boolean;
}

/** Options every spawn shares. */
export interface ProcessOptions {
  /** The working directory: an absolute path inside a granted workspace (the sandbox refuses anything else). */
  readonly cwd: string;
  /**
   * Variables added to the seam's base environment (the configured allow list of host variables plus the
   * configured fixed values). Nothing else from the host environment reaches the child.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Stops the child (its whole process group) when aborted. */
  readonly signal?: AbortSignal;
  /** Milliseconds after which the child's whole process group is killed. */
  readonly timeout?: number;
}

/** Options of {@linkcode Subprocess.run}. */
export interface RunOptions extends ProcessOptions {
  /** Written to the child's stdin, which is then closed; without it stdin is `/dev/null`. */
  readonly stdin?: string | Uint8Array;
  /** Bytes kept per stream (head and tail); the rest is dropped and counted (default: the seam's `max_output`). */
  readonly maxOutput?: number;
}

/** What {@linkcode Subprocess.run} captured. */
export interface RunResult extends ChildExit {
  /** The host process id, which is also the host process group id. */
  readonly pid: number;
  /** Standard output (UTF-8), with a truncation marker in the middle when bytes were dropped. */
  readonly stdout: string;
  /** Standard error (UTF-8), with a truncation marker in the middle when bytes were dropped. */
  readonly stderr: string;
  /** Bytes dropped from each stream by the output cap (0 when nothing was dropped). */
  readonly truncated: { readonly stdout: number; readonly stderr: number };
}

/** Options of {@linkcode Subprocess.spawn}. */
export interface SpawnOptions extends ProcessOptions {
  /** `"piped"` (default) gives the handle a writable stdin; `"null"` connects `/dev/null`. */
  readonly stdin?: "piped" | "null";
  /** `"piped"` (default) gives the handle a readable stderr; `"null"` discards it. */
  readonly stderr?: "piped" | "null";
}

/** A long-lived child with streaming stdio. */
export interface ChildHandle {
  /** The host process id, which is also the host process group id. */
  readonly pid: number;
  /** The child's stdin (`null` when spawned with `stdin: "null"`); close it to send EOF. */
  readonly stdin: WritableStream<Uint8Array> | null;
  /** The child's stdout. The caller must drain or cancel it, or the child blocks once the pipe is full. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** The child's stderr (`null` when spawned with `stderr: "null"`); drain or cancel it like stdout. */
  readonly stderr: ReadableStream<Uint8Array> | null;
  /** Settles once the child has exited and whatever was left of its process group has been killed. */
  readonly status: Promise<ChildExit>;
  /** Kills the whole process group (SIGTERM, then SIGKILL after the grace period); idempotent. */
  kill(): Promise<ChildExit>;
}

/** Options of {@linkcode Subprocess.ptySpawn}. */
export interface PtySpawnOptions {
  /** The working directory (see {@linkcode ProcessOptions.cwd}). */
  readonly cwd: string;
  /** Variables added to the seam's base environment (see {@linkcode ProcessOptions.env}). */
  readonly env?: Readonly<Record<string, string>>;
  /** Terminal width in columns (default 80). */
  readonly cols?: number;
  /** Terminal height in rows (default 24). */
  readonly rows?: number;
  /** Kills the terminal's process group when aborted. */
  readonly signal?: AbortSignal;
}

/** A program running on a pseudo-terminal. */
export interface PtyHandle {
  /** The host process id of the session leader (also its process group id). */
  readonly pid: number;
  /**
   * Subscribes to the terminal's output, decoded as UTF-8; returns the unsubscribe function. Output produced
   * before the first subscription is held for it (up to the seam's output cap).
   */
  onData(listener: (data: string) => void): () => void;
  /** Settles once the program has exited and whatever was left of its process group has been killed. */
  readonly exited: Promise<ExitStatus>;
  /** Types `data` into the terminal (`"\r"` is Enter, `"\x03"` is Ctrl-C); ignored once the program exited. */
  write(data: string): void;
  /** Resizes the terminal; ignored once the program exited. */
  resize(cols: number, rows: number): void;
  /** Kills the whole process group (SIGHUP and SIGTERM, then SIGKILL after the grace period); idempotent. */
  kill(): Promise<ExitStatus>;
}

/**
 * Starts programs.
 *
 * Contract: every argv is passed to `sandbox.wrap(argv, {cwd, tty, env})` (a pty adds `columns` and `rows`) and
 * only the wrapped command is started, with a cleared environment plus exactly the wrapped `env`; nothing else
 * builds a final argv. Every child runs in its own process group (the pty child is a session
 * leader); a timeout, an aborted signal, `kill()` or the seam's shutdown sends SIGTERM to the whole group, calls
 * the wrapped command's `signal` hook when it has one, and sends SIGKILL to whatever is left once the group leader
 * has exited or the grace period has passed. When a group leader exits on its own, whatever is left of its group
 * is killed. The child's environment is explicit: the configured allow list of host variables, the configured
 * fixed values and the caller's `env`; nothing else from the host leaks. Nothing a child does blocks the event
 * loop. A sandbox refusal rejects with its `TerretError` (`Denied`); a program that cannot be started rejects with
 * `TerretError` code `SpawnFailed`; a signal already aborted rejects with its reason; a stopped seam rejects with
 * `TerretError` code `ServiceStopped`.
 */
export interface Subprocess {
  /** Runs a program to completion, capturing capped stdout and stderr. */
  run(argv: readonly string[], options: RunOptions): Promise<RunResult>;
  /** Starts a long-lived program with streaming stdio (MCP stdio servers, background jobs). */
  spawn(argv: readonly string[], options: SpawnOptions): Promise<ChildHandle>;
  /** Starts a program on a pseudo-terminal (shells, terminals); the sandbox is told `tty: true`. */
  ptySpawn(argv: readonly string[], options: PtySpawnOptions): Promise<PtyHandle>;
  /**
   * The same seam with a different sandbox: every argv started through the returned `Subprocess` is wrapped by
   * a sandbox the seam builds from `request` (a provider resolved by name, with the request's grants) instead of
   * the sandbox row's. The base environment, process groups and shutdown are shared: stopping this seam stops
   * the returned one's children too.
   *
   * Contract: resolves only once the sandbox is prepared (`workspaceReady`), so a provider that cannot run here
   * fails now, not at the first spawn; an unknown provider, one not available in this build, or one that cannot
   * honour the grants rejects with `TerretError` (`ConfigInvalid` or `SandboxUnavailable`). It never falls back to
   * the sandbox row or to running programs unconfined.
   */
  confine(request: ConfinementRequest): Promise<Subprocess>;
}

/** The subprocess service key (config row `subprocess`). */
export const SubprocessKey: ServiceKey<Subprocess> = defineService<Subprocess>(
  "subprocess",
  "Starts programs through the sandbox, in their own process groups, with capped capture",
);
