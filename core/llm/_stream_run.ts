/**
 * One streamed model request as a hand-written async iterator: attempts, retries, reading and decoding, with
 * buffered events handed out without an async generator per event (the hot path of every model stream).
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import {
  backoffDelay,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
  type Timing,
} from "./retry.ts";
import { SseDecoder } from "./sse.ts";
import type { StreamEvent } from "./vocabulary.ts";
import type { StreamDecoder } from "./adapter_base.ts";
import {
  aborted,
  describe,
  errorDetail,
  type ErrorEvent,
  failure,
  type IdleTimer,
  type IdleWatchdog,
  ignore,
  readCapped,
} from "./_http.ts";

/** What a run needs from its adapter. */
export interface RunSettings {
  readonly policy: RetryPolicy;
  readonly timing: Timing;
  readonly timeoutMs: number;
  /** The adapter's idle deadlines (one timer for all its requests). */
  readonly watchdog: IdleWatchdog;
  readonly logger: Logger | undefined;
  /** Sends one attempt's request; rejects promptly when `signal` aborts. */
  readonly send: (signal: AbortSignal) => Promise<Response>;
  readonly decoder: () => StreamDecoder;
  readonly redact: (text: string) => string;
  /** The adapter's read buffers no stream holds (a finished stream hands its buffer back). */
  readonly buffers: Uint8Array[];
  /** The adapter's text decoder (decoding whole reads keeps no state between calls). */
  readonly text: TextDecoder;
}

/** The most idle read buffers an adapter keeps. */
const POOLED_BUFFERS = 16;

type Reader = ReadableStreamDefaultReader<Uint8Array> | ReadableStreamBYOBReader;

/**
 * The buffer a byte-stream body is read into. A default reader of a fetch body allocates 64 KiB for every read;
 * reading into one 16 KiB buffer per stream (a network read rarely brings more) keeps many concurrent streams small
 * and spares the collector.
 */
const READ_BUFFER_BYTES = 16 * 1024;

const DONE: Promise<IteratorResult<StreamEvent>> = Promise.resolve({
  done: true,
  value: undefined,
});
const TIMEOUT = Symbol("timeout");
/** The reason an attempt's controller is aborted once it is over (a shared value: no `DOMException` per stream). */
const RELEASED = Symbol("released");
const DONE_READ = { done: true } as ReadableStreamReadDoneResult<Uint8Array>;

/** The per-attempt state. */
interface Attempt {
  readonly controller: AbortController;
  readonly timer: IdleTimer;
  readonly onAbort: () => void;
  reader: Reader | undefined;
  /** The buffer of a BYOB reader (handed back by each read), or `undefined` with a default reader. */
  buffer: Uint8Array | undefined;
  sse: SseDecoder | undefined;
  readonly decoder: StreamDecoder;
  /** Where the decoder writes: a private list until output starts, then the run's buffer itself. */
  out: StreamEvent[];
  finished: boolean;
  held: StreamEvent | undefined;
  streaming: boolean;
}

/** An in-flight streamed request; see `HttpAdapterBase` for the contract it implements. */
export class StreamRun implements AsyncIterableIterator<StreamEvent> {
  readonly #settings: RunSettings;
  readonly #signal: AbortSignal | undefined;
  readonly #buffer: StreamEvent[] = [];
  #index = 0;
  #ended = false;
  #number = 0;
  #attempt: Attempt | undefined;
  #pulling: Promise<IteratorResult<StreamEvent>> | undefined;

  constructor(settings: RunSettings, signal: AbortSignal | undefined) {
    this.#settings = settings;
    this.#signal = signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamEvent>> {
    if (this.#index < this.#buffer.length) {
      return Promise.resolve({ done: false, value: this.#buffer[this.#index++]! });
    }
    if (this.#ended) return DONE;
    if (this.#pulling !== undefined) return this.#pulling.then(() => this.next());
    this.#pulling = this.#pull();
    return this.#pulling;
  }

  return(): Promise<IteratorResult<StreamEvent>> {
    this.#ended = true;
    this.#buffer.length = 0;
    this.#index = 0;
    this.#closeAttempt();
    return DONE;
  }

  async #pull(): Promise<IteratorResult<StreamEvent>> {
    this.#buffer.length = 0;
    this.#index = 0;
    try {
      while (this.#buffer.length === 0 && !this.#ended) {
        const attempt = this.#attempt;
        if (attempt?.reader === undefined) {
          await this.#open();
          continue;
        }
        // The read is awaited here, not in a helper: one async frame per network read is the hot path.
        let chunk: ReadableStreamReadResult<Uint8Array> = DONE_READ;
        let error: unknown;
        attempt.timer.waiting();
        try {
          chunk = attempt.buffer === undefined
            ? await (attempt.reader as ReadableStreamDefaultReader<Uint8Array>).read()
            : await (attempt.reader as ReadableStreamBYOBReader).read(attempt.buffer);
          if (attempt.buffer !== undefined && chunk.value !== undefined) {
            attempt.buffer = new Uint8Array(chunk.value.buffer);
          }
        } catch (thrown) {
          error = thrown ?? new Error("the body stream failed");
        }
        attempt.timer.done();
        if (this.#ended) break;
        const failed = this.#consume(attempt, chunk, error);
        if (failed !== undefined) await this.#failed(failed);
      }
    } catch (error) {
      this.#terminal(
        failure("protocol", `Cannot stream from the model: ${describe(error)}`, false),
      );
    }
    this.#pulling = undefined;
    // A plain result, not `this.next()`: resolving an async function with a promise costs extra turns.
    if (this.#index < this.#buffer.length) {
      return { done: false, value: this.#buffer[this.#index++]! };
    }
    return { done: true, value: undefined };
  }

  /** Starts an attempt: sends the request and checks the status. */
  async #open(): Promise<void> {
    this.#closeAttempt();
    const signal = this.#signal;
    if (signal?.aborted) return this.#terminal(aborted());
    const attempt = this.#startAttempt();
    let response: Response;
    try {
      response = await this.#settings.send(attempt.controller.signal);
    } catch (error) {
      if (this.#ended) return;
      if (signal?.aborted) return this.#terminal(aborted());
      const why = attempt.controller.signal.reason === TIMEOUT
        ? `no response within ${this.#settings.timeoutMs / 1000} s`
        : `cannot reach the server: ${describe(error)}`;
      return await this.#failed(failure("network", `Cannot stream from the model: ${why}`, true));
    }
    if (this.#ended) return void response.body?.cancel().catch(ignore);
    attempt.timer.done();
    if (!response.ok) return await this.#httpError(response, attempt);
    if (response.headers.get("content-type")?.includes("application/json")) {
      // A 200 that is not an event stream: a proxy's error, or a server that ignored `stream: true`.
      attempt.timer.waiting();
      const detail = errorDetail(await readCapped(response, attempt.controller.signal));
      if (this.#ended) return;
      if (this.#signal?.aborted) return this.#terminal(aborted());
      const message = `Cannot stream from the model: expected an event stream, got JSON: ${detail}`;
      return await this.#failed(failure("protocol", message, false));
    }
    if (response.body === null) {
      const event = failure(
        "protocol",
        "Cannot stream from the model: the response has no body",
        false,
      );
      return await this.#failed(event);
    }
    try {
      attempt.reader = response.body.getReader({ mode: "byob" });
      attempt.buffer = this.#settings.buffers.pop() ?? new Uint8Array(READ_BUFFER_BYTES);
    } catch {
      // Not a byte stream (a transport's own body): read what it gives.
      attempt.reader = response.body.getReader();
    }
    attempt.sse = new SseDecoder((data, event) => {
      if (!attempt.finished) attempt.finished = attempt.decoder.message(data, attempt.out, event);
    }, { text: this.#settings.text });
  }

  #startAttempt(): Attempt {
    const controller = new AbortController();
    const onAbort = (): void => {
      controller.abort(this.#signal?.reason);
      attempt.reader?.cancel().catch(ignore);
    };
    const timer = this.#settings.watchdog.watch(() => {
      controller.abort(TIMEOUT);
      attempt.reader?.cancel().catch(ignore);
    });
    const attempt: Attempt = {
      controller,
      timer,
      onAbort,
      reader: undefined,
      buffer: undefined,
      sse: undefined,
      decoder: this.#settings.decoder(),
      out: [],
      finished: false,
      held: undefined,
      streaming: false,
    };
    this.#signal?.addEventListener("abort", onAbort, { once: true });
    this.#attempt = attempt;
    return attempt;
  }

  /** Handles one network read (or its failure); returns an error that came before any output. */
  #consume(
    attempt: Attempt,
    chunk: ReadableStreamReadResult<Uint8Array>,
    error: unknown,
  ): ErrorEvent | undefined {
    if (
      error !== undefined && !attempt.finished && !this.#signal?.aborted &&
      attempt.controller.signal.reason !== TIMEOUT
    ) {
      attempt.out.push(
        failure("network", `Cannot complete the model stream: ${describe(error)}`, true),
      );
      attempt.finished = true;
    }
    if (this.#signal?.aborted) {
      this.#terminal(aborted());
      return undefined;
    }
    if (attempt.controller.signal.reason === TIMEOUT && !attempt.finished) {
      const seconds = this.#settings.timeoutMs / 1000;
      attempt.out.push(
        failure("network", `Cannot complete the model stream: no data for ${seconds} s`, true),
      );
      attempt.finished = true;
    }
    if (!chunk.done) {
      attempt.sse!.push(chunk.value);
    } else if (!attempt.finished) {
      attempt.sse!.end();
      if (!attempt.finished) attempt.decoder.end(attempt.out);
      attempt.finished = true;
    }
    if (attempt.out === this.#buffer) {
      if (attempt.finished) this.#finishStreaming();
      return undefined;
    }
    return this.#drain(attempt);
  }

  /** The decoder wrote its terminal event straight into the buffer: redact it if it is an error, and end. */
  #finishStreaming(): void {
    const last = this.#buffer.length - 1;
    const event = this.#buffer[last];
    if (event?.type === "error") {
      const message = this.#settings.redact(event.error.message);
      this.#buffer[last] = { type: "error", error: { ...event.error, message } };
    }
    this.#ended = true;
    this.#closeAttempt();
  }

  /** Moves decoded events to the buffer; returns an error that came before any output (a retry candidate). */
  #drain(attempt: Attempt): ErrorEvent | undefined {
    const out = attempt.out;
    for (let i = 0; i < out.length; i++) {
      const event = out[i]!;
      if (!attempt.streaming) {
        if (event.type === "message_start") {
          attempt.held = event;
          continue;
        }
        if (event.type === "error") {
          out.length = 0;
          return event;
        }
        attempt.streaming = true;
        if (attempt.held !== undefined) this.#buffer.push(attempt.held);
      }
      if (event.type === "error" || event.type === "message_stop") {
        out.length = 0;
        this.#terminal(event);
        return undefined;
      }
      this.#buffer.push(event);
    }
    out.length = 0;
    if (attempt.streaming) attempt.out = this.#buffer;
    return undefined;
  }

  async #httpError(response: Response, attempt: Attempt): Promise<void> {
    attempt.timer.waiting();
    const text = await readCapped(response, attempt.controller.signal);
    attempt.timer.done();
    if (this.#ended) return;
    if (this.#signal?.aborted) return this.#terminal(aborted());
    const status = response.status;
    const detail = errorDetail(text);
    const retryAfter = parseRetryAfter(response.headers, this.#settings.timing.now());
    const hint = response.headers.get("x-should-retry");
    const retryable = hint === "true" ? true : hint === "false" ? false : isRetryableStatus(status);
    let message = `Cannot stream from the model: HTTP ${status}${
      detail === "" ? "" : `: ${detail}`
    }`;
    if (
      retryable && retryAfter !== undefined && retryAfter > this.#settings.policy.maxRetryAfterMs
    ) {
      message += ` (the server asks to retry after ${Math.ceil(retryAfter / 1000)} s)`;
    }
    await this.#failed(failure("http", message, retryable, status), retryAfter);
  }

  /** Retries after a wait when the failure allows it and retries remain; otherwise reports it. */
  async #failed(event: ErrorEvent, retryAfter?: number): Promise<void> {
    const { policy, timing, logger } = this.#settings;
    const message = this.#settings.redact(event.error.message);
    const attempt = this.#number;
    if (event.error.retryable && attempt < policy.maxRetries) {
      const wait = retryAfter ?? backoffDelay(attempt, policy, timing.random);
      if (wait <= policy.maxRetryAfterMs) {
        this.#closeAttempt();
        this.#number++;
        logger?.log("warn", "Retrying model request", {
          attempt: attempt + 2,
          attempts: policy.maxRetries + 1,
          delay_ms: wait,
          reason: message,
        });
        await timing.sleep(wait, this.#signal);
        return;
      }
    }
    this.#terminal({ type: "error", error: { ...event.error, message } });
  }

  /** Queues the terminal event and releases the connection. */
  #terminal(event: StreamEvent): void {
    this.#buffer.push(
      event.type === "error"
        ? {
          type: "error",
          error: { ...event.error, message: this.#settings.redact(event.error.message) },
        }
        : event,
    );
    this.#ended = true;
    this.#closeAttempt();
  }

  #closeAttempt(): void {
    const attempt = this.#attempt;
    if (attempt === undefined) return;
    this.#attempt = undefined;
    attempt.timer.clear();
    this.#signal?.removeEventListener("abort", attempt.onAbort);
    // Once the body is ours, cancelling it releases the connection; before that the request itself is aborted.
    if (attempt.reader === undefined) attempt.controller.abort(RELEASED);
    else attempt.reader.cancel().catch(ignore);
    // A buffer a pending read holds is detached (length 0): only one no read holds goes back to the pool.
    const buffer = attempt.buffer;
    attempt.buffer = undefined;
    if (
      buffer !== undefined && buffer.byteLength === READ_BUFFER_BYTES &&
      this.#settings.buffers.length < POOLED_BUFFERS
    ) this.#settings.buffers.push(buffer);
  }
}
