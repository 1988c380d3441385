/**
 * The socket's replay scheduler: replays run in bounded slices, one slice at a time, each in its own turn of the
 * event loop, round-robin across connections, under a server-wide byte budget. Internal.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** What one slice of a replay did. */
export type SliceOutcome = "more" | "blocked" | "done";

/** One connection's replay, as the scheduler drives it. */
export interface ReplayJob {
  /**
   * Sends replayed events until about `bytes` have been sent (at least one event when its queue has room); says
   * whether more remains, the socket's queue is full (`blocked`), or the replay is over (`done`, also when the
   * connection ended). Must not throw: a failure is the job's to report, and it answers `done`.
   */
  slice(bytes: number): Promise<SliceOutcome>;
  /** True once a blocked job's socket has drained enough to take another slice. */
  drained(): boolean;
  /** The bytes the job holds now: its socket's unsent queue (the page it reads is the scheduler's allowance). */
  queued(): number;
}

/** Scheduler figures (see `WsStats`). */
export interface SchedulerStats {
  /** Started replays not blocked on their socket. */
  readonly running: number;
  /** Replays not started yet. */
  readonly waiting: number;
  /** Started replays waiting for their socket to drain. */
  readonly blocked: number;
  /** The most replays ever running at once. */
  readonly peak: number;
  /** The bytes replays hold now (socket queues plus one page each). */
  readonly bytes: number;
  /** The most bytes replays ever held at once, measured after each slice (queues grow only in slices). */
  readonly bytes_peak: number;
}

/** The scheduler's limits (read on every use, so a reconfigure applies at once). */
export interface SchedulerLimits {
  /** Started replays running at once (`max_concurrent_replays`). */
  readonly concurrency: number;
  /** Bytes all replays may hold at once (`replay_budget_bytes`). */
  readonly budget: number;
}

/**
 * Bytes sent per slice before the job goes to the back of the queue: about 20 events of 800 bytes, a fraction of a
 * millisecond, so a handshake or `hello` arriving meanwhile waits little (`bench/replay_storm.ts`, docs/protocol.md
 * §11: another tenant's `hello` p50 7 ms against 9 ms with 64 KiB slices, at no measurable CPU per replayed event).
 */
export const SLICE_BYTES = 16 * 1024;
/**
 * Bytes a slice may send when its replay competes with no other: a replay alone (none other running, waiting to
 * start or blocked on its reader) sends up to this much per turn, so one connection's replay is not paid for in
 * event-loop turns it does not need (`bench/replay_storm.ts`: one connection's replay against the floor). Between one
 * and many competitors the slice is this divided among them, never below {@linkcode SLICE_BYTES}: a storm runs in
 * small slices.
 */
export const MAX_SLICE_BYTES = 256 * 1024;
/** Bytes of one store page of a replay: what a started replay holds besides its socket queue. */
export const PAGE_BYTES = 64 * 1024;
const POLL_MS = 2;

/**
 * The bytes one slice may send when `competing` replays (this one included) run, wait to start or wait for their
 * readers: {@linkcode MAX_SLICE_BYTES}
 * shared among them, at least {@linkcode SLICE_BYTES}.
 */
export function sliceBytes(competing: number): number {
  const share = Math.floor(MAX_SLICE_BYTES / Math.max(1, competing));
  return Math.max(SLICE_BYTES, Math.min(MAX_SLICE_BYTES, share));
}

interface Entry {
  readonly job: ReplayJob;
  state: "waiting" | "running" | "slicing" | "blocked" | "ended";
  finish(): void;
}

/**
 * Fair replay: a FIFO of replays not started, and a round-robin ring of started ones. Each turn runs one slice of
 * the next running replay, then yields to the event loop (`setImmediate`), so a handshake, a `hello`, an ack, a
 * live event or an append waits at most one slice behind replay work, however many replays are queued. The slice is
 * adaptive ({@linkcode sliceBytes}): {@linkcode MAX_SLICE_BYTES} for a replay alone, shrinking as more replays run
 * or wait, to {@linkcode SLICE_BYTES} in a storm; it never takes the bytes held past the budget. A replay whose socket queue is full is `blocked`: it leaves the ring (it takes no turn
 * and no concurrency slot) until its socket drains; a reader that never drains is dropped by the stalled-reader
 * sweep. A replay starts only while fewer than `concurrency` run and the bytes held by all replays (their socket
 * queues plus one page each) stay within `budget`; otherwise it waits, in arrival order.
 */
export class ReplayScheduler {
  readonly #limits: () => SchedulerLimits;
  readonly #waiting: Entry[] = [];
  readonly #ring: Entry[] = [];
  readonly #blocked = new Set<Entry>();
  #scheduled = false;
  #poll: ReturnType<typeof setTimeout> | undefined;
  #peak = 0;
  #bytesPeak = 0;
  #closed = false;

  constructor(limits: () => SchedulerLimits) {
    this.#limits = limits;
  }

  /** Runs `job` to its end; resolves when it is done, or at once (removed) when `signal` aborts. */
  run(job: ReplayJob, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry: Entry = {
        job,
        state: "waiting",
        finish: () => {
          if (entry.state === "ended") return;
          signal.removeEventListener("abort", entry.finish);
          this.#remove(entry);
          entry.state = "ended";
          resolve();
        },
      };
      signal.addEventListener("abort", entry.finish, { once: true });
      this.#waiting.push(entry);
      this.#wake();
    });
  }

  /** The current figures. */
  stats(): SchedulerStats {
    return {
      running: this.#ring.length,
      waiting: this.#waiting.length,
      blocked: this.#blocked.size,
      peak: this.#peak,
      bytes: this.#held(),
      bytes_peak: this.#bytesPeak,
    };
  }

  /** Limits changed: start what they now allow. */
  resized(): void {
    this.#wake();
  }

  /** Stops scheduling (jobs end through their signals). */
  close(): void {
    this.#closed = true;
    if (this.#poll !== undefined) clearTimeout(this.#poll);
  }

  #remove(entry: Entry): void {
    const list = entry.state === "waiting"
      ? this.#waiting
      : entry.state === "running"
      ? this.#ring
      : undefined;
    if (list !== undefined) {
      const index = list.indexOf(entry);
      if (index >= 0) list.splice(index, 1);
    }
    this.#blocked.delete(entry);
    this.#wake();
  }

  #held(): number {
    let bytes = 0;
    for (const entry of this.#ring) bytes += entry.job.queued() + PAGE_BYTES;
    for (const entry of this.#blocked) bytes += entry.job.queued() + PAGE_BYTES;
    return bytes;
  }

  #wake(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#turn();
    });
  }

  async #turn(): Promise<void> {
    if (this.#closed) return;
    if (this.#poll !== undefined) {
      clearTimeout(this.#poll);
      this.#poll = undefined;
    }
    for (const entry of [...this.#blocked]) {
      if (entry.job.drained()) {
        this.#blocked.delete(entry);
        entry.state = "running";
        this.#ring.push(entry);
      }
    }
    const limits = this.#limits();
    let held = this.#held();
    while (
      this.#waiting.length > 0 && this.#ring.length < limits.concurrency &&
      held + PAGE_BYTES <= limits.budget
    ) {
      const entry = this.#waiting.shift()!;
      entry.state = "running";
      this.#ring.push(entry);
      held += PAGE_BYTES;
    }
    this.#peak = Math.max(this.#peak, this.#ring.length);
    this.#bytesPeak = Math.max(this.#bytesPeak, held);
    const entry = this.#ring[0];
    // The slice never takes what replays hold past the budget; below one small slice of room, nothing runs.
    const room = limits.budget - held;
    if (entry === undefined || room < SLICE_BYTES) {
      // Nothing can run: wait for a blocked socket to drain (or the budget to free), polling.
      if (this.#blocked.size > 0 || entry !== undefined) {
        this.#poll = setTimeout(() => this.#wake(), POLL_MS);
      }
      return;
    }
    this.#ring.shift();
    entry.state = "slicing"; // out of the ring while its slice runs
    // Competing: this replay, the others running, those waiting to start, and those waiting for their readers.
    const competing = this.#ring.length + 1 + this.#waiting.length + this.#blocked.size;
    // A job counts what it sends in UTF-16 code units (a frame's length), and one takes up to 3 bytes of UTF-8 in
    // the socket's queue: a third of the room keeps even non-ASCII text inside the budget.
    const bytes = Math.min(Math.floor(room / 3), sliceBytes(competing));
    const outcome = await entry.job.slice(bytes);
    this.#bytesPeak = Math.max(this.#bytesPeak, this.#held() + entry.job.queued() + PAGE_BYTES);
    if (outcome === "done") entry.finish();
    else if ((entry.state as Entry["state"]) === "ended") {
      // Aborted during the slice.
    } else if (outcome === "blocked") {
      entry.state = "blocked";
      this.#blocked.add(entry);
    } else {
      entry.state = "running";
      this.#ring.push(entry);
    }
    this.#wake();
  }
}
