/**
 * A clock for tests of retrying code: sleeps are recorded, never waited.
 *
 * @module
 */
import type { Timing } from "../retry.ts";

/** A {@linkcode Timing} that does not wait: it records each requested sleep and returns a fixed random number. */
export interface RecordingTiming extends Timing {
  /** Every sleep requested, in milliseconds, in order. */
  readonly sleeps: number[];
}

/**
 * Creates a {@linkcode RecordingTiming}: `sleep` resolves at once (recording the duration), `random` returns
 * `random` (default 0.5), `now` returns `now` (default the real clock).
 */
export function recordingTiming(
  options: { readonly random?: number; readonly now?: number } = {},
): RecordingTiming {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep(ms) {
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => options.random ?? 0.5,
    now: () => options.now ?? Date.now(),
  };
}
