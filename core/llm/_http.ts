/**
 * HTTP helpers of the streaming run: the idle timer, failure events, abortable waits and error bodies.
 *
 * @module
 */
import type { StreamEvent, StreamFailure } from "./vocabulary.ts";

/** An `error` stream event. */
export type ErrorEvent = Extract<StreamEvent, { type: "error" }>;

const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The idle deadlines of one adapter's requests, kept by one timer: each request registers an {@linkcode IdleTimer}
 * and the watchdog fires it once it has waited for the server (for response headers, a read, an error body) for
 * the timeout, counting only while it waits, so a consumer that pauses between events never trips it. The timer
 * re-arms for the earliest deadline while requests are registered and is unref'd: a request that ends costs a set
 * deletion, not a timer, and no timer keeps the process alive (an in-flight request does).
 */
export class IdleWatchdog {
  readonly #ms: number;
  readonly #watched = new Set<IdleTimer>();
  #armed = false;

  /** @param ms the longest wait for the server, in milliseconds */
  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Starts watching one request (in the waiting state: it is about to be sent). */
  watch(onIdle: () => void): IdleTimer {
    const timer = new IdleTimer(this.#watched, onIdle);
    this.#watched.add(timer);
    if (!this.#armed) this.#arm(this.#ms);
    return timer;
  }

  #arm(ms: number): void {
    this.#armed = true;
    Deno.unrefTimer(setTimeout(() => this.#check(), ms));
  }

  #check(): void {
    this.#armed = false;
    const now = Date.now();
    let next = this.#ms;
    for (const timer of this.#watched) {
      const since = timer.since;
      if (since === undefined) continue;
      const waited = now - since;
      if (waited >= this.#ms) {
        this.#watched.delete(timer);
        timer.fire();
      } else {
        next = Math.min(next, this.#ms - waited);
      }
    }
    if (this.#watched.size > 0) this.#arm(next);
  }
}

/** One request's idle deadline (see {@linkcode IdleWatchdog}): `waiting()` and `done()` only record the time. */
export class IdleTimer {
  readonly #watched: Set<IdleTimer>;
  readonly #onIdle: () => void;
  /** When the current wait for the server began, or `undefined` when not waiting. */
  since: number | undefined;

  constructor(watched: Set<IdleTimer>, onIdle: () => void) {
    this.#watched = watched;
    this.#onIdle = onIdle;
    this.since = Date.now();
  }

  /** The run starts waiting for the server. */
  waiting(): void {
    this.since = Date.now();
  }

  /** The server answered; the wait is over. */
  done(): void {
    this.since = undefined;
  }

  /** Stops watching for good. */
  clear(): void {
    this.#watched.delete(this);
  }

  /** The watchdog found the wait over the timeout. */
  fire(): void {
    this.#onIdle();
  }
}

/** An `error` event of the given kind. */
export function failure(
  kind: StreamFailure["kind"],
  message: string,
  retryable: boolean,
  status?: number,
): ErrorEvent {
  const error: StreamFailure = status === undefined
    ? { kind, message, retryable }
    : { kind, message, retryable, status };
  return { type: "error", error };
}

/** The event ending an aborted stream. */
export function aborted(): ErrorEvent {
  return failure("aborted", "Cannot complete the model stream: the request was aborted", false);
}

/** An error's message, followed by its causes' (fetch puts the useful part, e.g. "Connection refused", there). */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? describe(error.cause) : undefined;
  return cause === undefined || error.message.includes(cause)
    ? error.message
    : `${error.message}: ${cause}`;
}

/** Swallows a rejection nobody needs to see (cancelling an already-closed body). */
export function ignore(): void {}

/**
 * Resolves like `sent`, or rejects as soon as `signal` aborts (for transports that ignore the signal); a response
 * arriving after the abort has its body cancelled.
 */
export function untilAborted(sent: Promise<Response>, signal: AbortSignal): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    sent.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) value.body?.cancel().catch(ignore);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Reads at most 64 KiB of an error body as text, then cancels the rest. */
export async function readCapped(response: Response, signal: AbortSignal): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const onAbort = (): void => void reader.cancel().catch(ignore);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    while (size < ERROR_BODY_LIMIT && !signal.aborted) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that fails mid-read still gives its status; the text so far is enough.
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.cancel().catch(ignore);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes.subarray(0, ERROR_BODY_LIMIT));
}

/** The human part of an error body: `error.message` (with `error_type`) of a JSON body, else trimmed text. */
export function errorDetail(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return "";
  try {
    const body = JSON.parse(trimmed) as { error?: unknown; message?: unknown };
    const error = typeof body.error === "object" && body.error !== null
      ? body.error as { message?: unknown; metadata?: { error_type?: unknown } }
      : undefined;
    const message = error?.message ?? body.message ??
      (typeof body.error === "string" ? body.error : undefined);
    if (typeof message === "string") {
      const type = error?.metadata?.error_type;
      return clip(typeof type === "string" ? `${message} (${type})` : message);
    }
  } catch {
    // Not JSON: fall through to the text.
  }
  return clip(trimmed);
}

function clip(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
