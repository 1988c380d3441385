/**
 * Process-group termination: SIGTERM to the whole group, then SIGKILL to whatever is left once the leader has
 * exited or the grace period has passed.
 *
 * Why not wait for the group to empty: without `/proc` (which Deno grants only under `--allow-all`) a zombie
 * cannot be told from a live process, and orphans re-parented to an init that reaps lazily stay zombies for
 * seconds, so "the group still answers signal 0" does not mean anything is alive. SIGKILL is harmless to zombies.
 *
 * @module
 */
import type { Logger } from "@terret/hames";

/** The signals a sandbox's `signal` hook understands. */
export type HookSignal = "SIGTERM" | "SIGKILL";

/** Options of {@linkcode GroupKiller}. */
export interface GroupKillerOptions {
  /** The process group id (the leader's pid). */
  readonly pgid: number;
  /** How long the leader gets between the first signals and SIGKILL. */
  readonly graceMs: number;
  /** Signals sent to the group first (`["SIGTERM"]`; a pty adds `"SIGHUP"`, which interactive bash obeys). */
  readonly first: readonly Deno.Signal[];
  /** Settles when the leader has exited (and been reaped). */
  readonly leaderExited: Promise<unknown>;
  /** The wrapped command's hook for reaching the tree where the host cannot (inside a container). */
  readonly hook?: ((signal: HookSignal) => Promise<void>) | undefined;
  /** Where failures to signal are reported. */
  readonly logger: Logger;
}

/**
 * Signals a process group; false when no process is in it. With `leaderAlive` (the leader is known not to be
 * reaped yet), a group that does not exist yet — a child signalled right after the fork, before its `setsid` —
 * falls back to signalling the leader itself. Never fall back once the leader may have been reaped: its pid may
 * belong to someone else.
 */
function signalGroup(
  pgid: number,
  signal: Deno.Signal,
  logger: Logger,
  leaderAlive = false,
): boolean {
  if (send(-pgid, signal, logger)) return true;
  return leaderAlive && send(pgid, signal, logger);
}

function send(target: number, signal: Deno.Signal, logger: Logger): boolean {
  try {
    Deno.kill(target, signal);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    logger.log("error", `Cannot signal process ${target}`, { signal, error });
    return false;
  }
}

/** Terminates one process group, once. */
export class GroupKiller {
  readonly #options: GroupKillerOptions;
  #terminating: Promise<void> | undefined;
  #leaderAlive = true;

  constructor(options: GroupKillerOptions) {
    this.#options = options;
    const reaped = () => void (this.#leaderAlive = false);
    options.leaderExited.then(reaped, reaped);
  }

  /** True once {@linkcode terminate} has been called. */
  get terminating(): boolean {
    return this.#terminating !== undefined;
  }

  /**
   * Sends the first signals to the group (and the hook SIGTERM), waits for the leader to exit for at most the
   * grace period, then sends SIGKILL to whatever is left (and the hook SIGKILL). Idempotent; resolves once the
   * leader has exited and the hook calls have settled.
   *
   * Once the leader has been reaped nothing is signalled: what was left of its group was swept when it exited,
   * and its pgid may since have been recycled for an unrelated process group (pids wrap, at 32,768 by default),
   * so a late kill (a terminal closed long after its program exited) must not reach it.
   */
  terminate(): Promise<void> {
    this.#terminating ??= this.#leaderAlive ? this.#escalate() : Promise.resolve();
    return this.#terminating;
  }

  /** After the leader exited on its own: kills whatever is left of its group (no grace: it is orphaned work). */
  sweep(): void {
    if (this.#terminating !== undefined) return;
    signalGroup(this.#options.pgid, "SIGKILL", this.#options.logger);
  }

  async #escalate(): Promise<void> {
    const { pgid, graceMs, first, leaderExited, hook, logger } = this.#options;
    for (const signal of first) signalGroup(pgid, signal, logger, this.#leaderAlive);
    const hooked = this.#hook("SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
    await Promise.race([leaderExited, graceOver]);
    clearTimeout(timer);
    signalGroup(pgid, "SIGKILL", logger, this.#leaderAlive);
    await hooked;
    if (hook !== undefined) await this.#hook("SIGKILL");
    await leaderExited;
  }

  async #hook(signal: HookSignal): Promise<void> {
    const hook = this.#options.hook;
    if (hook === undefined) return;
    try {
      await hook(signal);
    } catch (error) {
      this.#options.logger.log("error", `Cannot signal the sandboxed process tree`, {
        pgid: this.#options.pgid,
        signal,
        error,
      });
    }
  }
}

const SIGNAL_NAMES: Readonly<Record<number, string>> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
};

/** The name of a Linux signal number (`9` → `"SIGKILL"`), or `"SIG<n>"` for the rare ones. */
export function signalName(signal: number): string {
  return SIGNAL_NAMES[signal] ?? `SIG${signal}`;
}
