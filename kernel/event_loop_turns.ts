/**
 * Turns of the event loop for long work done in steps with no I/O of its own (a sweep of every session at start),
 * so that sockets and other agents are served between the steps.
 *
 * Why a step cannot just await `setImmediate`: Deno runs its event loop on a single-threaded Tokio runtime, which
 * polls the network only when it has nothing ready to run, or else once every 61 runs of ready work. A loop that
 * yields through `setImmediate` (or anything that settles at once) always has ready work, so a request that arrives
 * meanwhile waits about 61 of its steps: 12 ms behind steps of 0.2 ms, 60 ms behind steps of 1 ms (measured on
 * Deno 2.9). Waiting on an operation another thread completes (a digest) polls the network only when that thread
 * is slower than the loop: under load it often is not. A timer does make the runtime poll, but it costs the timer's
 * resolution: 1-2 ms. So a turn is a `setImmediate`, and once per slice of the clock a zero-delay timer.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** How long, in milliseconds, steps run between two turns that let the runtime poll the network (default). */
export const EVENT_LOOP_SLICE_MS = 5;

/** Options for {@linkcode EventLoopTurns}. */
export interface EventLoopTurnsOptions {
  /** The width of the clock's slices, in milliseconds: a turn waits for a timer once per slice (default 5). */
  readonly sliceMs?: number;
  /** The clock the slice is measured with, in milliseconds (default `performance.now`). */
  readonly now?: () => number;
}

/**
 * Gives the event loop a turn between the steps of one long piece of work. `turn()` lets other ready work (other
 * agents' callbacks) run, as `setImmediate` does; the first turn in each new slice of the clock (`sliceMs` wide,
 * counted from the clock's origin) waits for a zero-delay timer instead, so the runtime polls the network
 * (connections, requests, socket frames) before the work goes on. The slices are the clock's, not the instance's:
 * several pieces of work running at once wait for their timers together, so the loop has nothing ready meanwhile
 * and does poll, where slices of their own would fill each other's waits.
 *
 * Contract: one instance per piece of work; `turn()` never rejects. A request that arrives while such work runs
 * waits about one slice and one step at most (or the runtime's own 61 steps, when that is sooner); the work pays
 * one timer's wait (1-2 ms) per slice it runs through.
 */
export class EventLoopTurns {
  readonly #sliceMs: number;
  readonly #now: () => number;
  #slice: number;

  constructor(options: EventLoopTurnsOptions = {}) {
    this.#sliceMs = options.sliceMs ?? EVENT_LOOP_SLICE_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#slice = this.#sliceOf(this.#now());
  }

  /** Resolves after other ready work has run, and after a timer (so a poll of the network) in a new slice. */
  async turn(): Promise<void> {
    const slice = this.#sliceOf(this.#now());
    if (slice === this.#slice) {
      await new Promise<void>((resume) => setImmediate(resume));
      return;
    }
    this.#slice = slice;
    await new Promise<void>((resume) => setTimeout(resume, 0));
  }

  #sliceOf(at: number): number {
    return Math.floor(at / this.#sliceMs);
  }
}
