/**
 * The only two places in Terret where a process is created. Each first hands the argv to `sandbox.wrap` and then
 * starts exactly the wrapped command (argv, cwd and env), so no spawn path can bypass the sandbox.
 *
 * @module
 */
import type { HostPermissions } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { Sandbox } from "@terret/core";
import type { WrapOptions, WrappedCommand } from "@terret/core/seams";
import type { IPty } from "@lydell/node-pty";
import { closeSync, constants as fsConstants, openSync } from "node:fs";

/** Options of {@linkcode launchPiped}. */
export interface PipedLaunch {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly stdin: "piped" | "null";
  readonly stderr: "piped" | "null";
}

/** Options of {@linkcode launchPty}. */
export interface PtyLaunch {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly cols: number;
  readonly rows: number;
}

/** A piped child and the command it was started from. */
export interface LaunchedChild {
  readonly child: Deno.ChildProcess;
  readonly wrapped: WrappedCommand;
}

/** A pty child and the command it was started from. */
export interface LaunchedPty {
  readonly pty: IPty;
  readonly wrapped: WrappedCommand;
  /**
   * Closes this process's hold on the terminal's slave side; call it once the program has exited (and been
   * reaped). Idempotent.
   */
  readonly release: () => void;
}

/**
 * Wraps `argv` (tty: false) and starts the wrapped command detached (its own session and process group) with a
 * cleared environment and piped stdout.
 */
export async function launchPiped(
  sandbox: Sandbox,
  argv: readonly string[],
  options: PipedLaunch,
): Promise<LaunchedChild> {
  const wrapped = await wrap(sandbox, argv, { cwd: options.cwd, env: options.env, tty: false });
  const [program, ...args] = wrapped.argv as [string, ...string[]];
  try {
    const child = new Deno.Command(program, {
      args,
      cwd: wrapped.cwd,
      env: { ...wrapped.env },
      clearEnv: true,
      detached: true,
      stdin: options.stdin,
      stdout: "piped",
      stderr: options.stderr,
    }).spawn();
    return { child, wrapped };
  } catch (error) {
    throw spawnFailed(argv, error);
  }
}

/**
 * Wraps `argv` (tty: true, with the terminal's size, which a provider whose terminal lives on the far side applies
 * before the program starts) and starts the wrapped command on a new pseudo-terminal (node-pty, loaded on first
 * use) with exactly the wrapped environment; the child is a session leader. The terminal type is the wrapped
 * environment's `TERM`, else `xterm-256color`.
 *
 * The terminal's slave side is held open in this process until {@linkcode LaunchedPty.release}. Without the hold,
 * a program that closes its terminal on the way out (every program does, right before it exits) makes the master
 * read fail with EIO; node-pty then closes the master, and the kernel hangs the terminal up and sends SIGHUP to its
 * session: a program preempted between its last `close` and its exit was reported as killed by SIGHUP (code 129)
 * instead of its own status. With the hold, the master stays open until node-pty has seen the program reaped;
 * the price is that node-pty then reports the exit after its socket timeout (200 ms) instead of at the EIO.
 */
export async function launchPty(
  sandbox: Sandbox,
  argv: readonly string[],
  options: PtyLaunch,
): Promise<LaunchedPty> {
  const wrapped = await wrap(sandbox, argv, {
    cwd: options.cwd,
    env: options.env,
    tty: true,
    columns: options.cols,
    rows: options.rows,
  });
  const [program, ...args] = wrapped.argv as [string, ...string[]];
  // forkpty cannot report a failed exec (the child just exits 1), so look the program up first.
  if (!(await findProgram(program, wrapped.env.PATH ?? "", wrapped.cwd))) {
    throw spawnFailed(argv, new Error(`"${program}" is not an executable file on PATH`));
  }
  const nodePty = await loadNodePty();
  try {
    const pty = nodePty.spawn(program, args, {
      name: wrapped.env.TERM ?? "xterm-256color",
      cols: options.cols,
      rows: options.rows,
      cwd: wrapped.cwd,
      env: { ...wrapped.env },
    });
    // Synchronously, before the event loop can deliver a master read (and its EIO).
    return { pty, wrapped, release: holdSlave(pty) };
  } catch (error) {
    throw spawnFailed(argv, error);
  }
}

/**
 * Opens the terminal's slave side (`/dev/pts/N`) with `O_NOCTTY`; returns the function that closes it.
 *
 * `O_NOCTTY` is what keeps the host alive: a process that leads its session and has no controlling terminal (how
 * systemd, `setsid` or a container's init start `trt serve`) takes the first terminal it opens without the flag as
 * its own. The open races the child's `TIOCSCTTY`: when the host won, the program ran without a controlling
 * terminal, and when the terminal closed the kernel hung it up and sent SIGHUP to the host, killing it. (`Deno.open`
 * takes no such flag; `node:fs` passes it through.)
 */
function holdSlave(pty: IPty): () => void {
  const name = (pty as { readonly ptsName?: unknown }).ptsName;
  let held: number | undefined;
  if (typeof name === "string" && name.startsWith("/dev/pts/")) {
    try {
      held = openSync(name, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch {
      // Not fatal: without the hold a program may only be misreported as hung up in a rare race.
    }
  }
  return () => {
    if (held !== undefined) closeSync(held);
    held = undefined;
  };
}

async function wrap(
  sandbox: Sandbox,
  argv: readonly string[],
  options: WrapOptions,
): Promise<WrappedCommand> {
  if (argv.length === 0 || argv.some((arg) => typeof arg !== "string")) {
    throw new TypeError("Cannot spawn: argv must be a non-empty list of strings");
  }
  const wrapped = await sandbox.wrap(argv, options);
  if (wrapped.argv.length === 0) {
    throw new TypeError(
      `Cannot spawn "${argv[0]}": sandbox "${sandbox.name}" returned an empty argv`,
    );
  }
  return wrapped;
}

function spawnFailed(argv: readonly string[], error: unknown): TerretError {
  return new TerretError(
    "SpawnFailed",
    `Cannot spawn "${argv[0]}": ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}

async function findProgram(program: string, path: string, cwd: string): Promise<boolean> {
  const candidates = program.includes("/")
    ? [program.startsWith("/") ? program : `${cwd}/${program}`]
    : path.split(":").filter((dir) => dir !== "").map((dir) => `${dir}/${program}`);
  for (const candidate of candidates) {
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // not here
    }
  }
  return false;
}

type NodePty = typeof import("@lydell/node-pty");

async function loadNodePty(): Promise<NodePty> {
  try {
    return await import("@lydell/node-pty");
  } catch (error) {
    throw new TerretError(
      "SpawnFailed",
      `Cannot load node-pty: ${
        (error as Error).message
      } (it needs --allow-ffi and unscoped --allow-read)`,
      { cause: error },
    );
  }
}

/**
 * What starting and stopping programs on pseudo-terminals needs from the host (node-pty under Deno, measured one
 * permission at a time): `--allow-ffi` for node-pty's native addon, scoped to the `@lydell` package directory it
 * resolves to (unscoped when it cannot be resolved to a local directory); unscoped `--allow-read` and
 * `--allow-write`, since node-pty opens the pty master as a tty stream, which Deno checks as a path-less access;
 * and unscoped `--allow-run`: `Deno.kill` of a process group needs it (and node-pty's own `kill` silently does
 * nothing without it), and the programs started are whatever the sandbox wraps — Deno does not sandbox them.
 */
export function ptyHostPermissions(): HostPermissions {
  return { ffi: nodePtyScope(), read: true, write: true, run: true };
}

function nodePtyScope(): string[] | true {
  let resolved: string;
  try {
    resolved = import.meta.resolve("@lydell/node-pty");
  } catch {
    return true;
  }
  if (!resolved.startsWith("file:")) return true;
  const path = decodeURIComponent(new URL(resolved).pathname);
  const at = path.lastIndexOf("/@lydell/");
  // The addon lives in the platform package next to node-pty (`@lydell/node-pty-<os>-<arch>`).
  return at === -1 ? true : [path.slice(0, at + "/@lydell".length)];
}
