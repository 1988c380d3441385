/**
 * Retry arithmetic shared by HTTP adapters: which statuses are worth retrying, jittered exponential backoff,
 * `Retry-After` parsing, and the injectable clock the waits run on.
 *
 * @module
 */

/**
 * The clock and dice a retrying adapter uses, injectable so tests check backoff arithmetic without sleeping.
 *
 * Contract: `sleep` resolves after about `ms` milliseconds, or as soon as `signal` aborts (it never rejects);
 * `random` returns a number in `[0, 1)`; `now` returns epoch milliseconds.
 */
export interface Timing {
  /** Waits `ms` milliseconds, or until `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in `[0, 1)`. */
  random(): number;
  /** Epoch milliseconds. */
  now(): number;
}

/** The real clock: `setTimeout`, `Math.random` and `Date.now`. */
export const REAL_TIMING: Timing = Object.freeze({
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
    });
  },
  random: (): number => Math.random(),
  now: (): number => Date.now(),
});

/** How an adapter retries; every field has a default (see {@linkcode DEFAULT_RETRY_POLICY}). */
export interface RetryPolicy {
  /** Retries after the first attempt; `0` disables retrying. */
  readonly maxRetries: number;
  /** The backoff base: attempt `n` (from 0) waits up to `baseDelayMs * 2 ** n`. */
  readonly baseDelayMs: number;
  /** The backoff ceiling. */
  readonly maxDelayMs: number;
  /**
   * The longest `Retry-After` honoured; a server asking for longer is not retried (the failure is reported,
   * retryable, so the caller can decide to wait).
   */
  readonly maxRetryAfterMs: number;
}

/** Two retries (three attempts), 500 ms doubling to at most 16 s, `Retry-After` honoured up to 60 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 16_000,
  maxRetryAfterMs: 60_000,
});

/** True for HTTP statuses worth retrying: 408 (timeout), 429 (rate limit) and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * The jittered exponential backoff before retry number `attempt` (0 for the first retry): half of the capped
 * exponential delay plus a random share of the other half ("equal jitter"), so retries spread out but never
 * collapse to zero.
 *
 * @example
 * ```ts
 * import { backoffDelay, DEFAULT_RETRY_POLICY } from "@terret/core/llm";
 * backoffDelay(2, DEFAULT_RETRY_POLICY, () => 0.5); // 1500: half of 2000, plus half of the other half
 * ```
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new RangeError(
      `Cannot compute backoff: attempt must be a non-negative integer, got ${attempt}`,
    );
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Reads the wait a server asks for: `retry-after-ms` (milliseconds, non-standard but common), else `Retry-After`
 * as delay-seconds or an HTTP date (relative to `now`). Returns `undefined` when absent or unparseable; a date in the
 * past yields 0.
 */
export function parseRetryAfter(headers: Headers, now: number): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  // An HTTP date names its weekday or month; this also keeps `Date.parse` from reading "-3" as a year.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
