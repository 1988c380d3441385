/**
 * Supervision of one child: its timeout, its abort signal, and the group kill either of them (or a shutdown)
 * triggers.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { WrappedCommand } from "@terret/core/seams";
import { GroupKiller } from "./_group.ts";

/** Options of {@linkcode Supervision}. */
export interface SupervisionOptions {
  readonly pid: number;
  readonly wrapped: WrappedCommand;
  readonly leaderExited: Promise<unknown>;
  readonly graceMs: number;
  readonly first: readonly Deno.Signal[];
  readonly timeout?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly logger: Logger;
}

/** Watches one child and kills its group on timeout, abort or request. */
export class Supervision {
  readonly #killer: GroupKiller;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  #cancelled = false;

  constructor(options: SupervisionOptions) {
    this.#killer = new GroupKiller({
      pgid: options.pid,
      graceMs: options.graceMs,
      first: options.first,
      leaderExited: options.leaderExited,
      hook: options.wrapped.signal,
      logger: options.logger,
    });
    this.#signal = options.signal;
    this.#onAbort = () => void this.stop("cancel");
    if (options.timeout !== undefined) {
      this.#timer = setTimeout(() => void this.stop("timeout"), options.timeout);
    }
    if (this.#signal?.aborted) this.#onAbort();
    else this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  /** True when the timeout fired first. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** True when the child was stopped on request (abort, kill, shutdown) first. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** Kills the group, recording why (the first reason wins); resolves once the leader has exited. */
  stop(reason: "timeout" | "cancel"): Promise<void> {
    if (!this.#killer.terminating) {
      if (reason === "timeout") this.#timedOut = true;
      else this.#cancelled = true;
    }
    this.#release();
    return this.#killer.terminate();
  }

  /** Called once the leader exited: kills what is left of the group and releases the timer and signal. */
  leaderExited(): Promise<void> {
    this.#release();
    if (this.#killer.terminating) return this.#killer.terminate();
    this.#killer.sweep();
    return Promise.resolve();
  }

  #release(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}
