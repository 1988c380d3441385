/**
 * The shared base of HTTP streaming adapters: one request, retried with jittered exponential backoff while nothing
 * has been streamed, read as server-sent events, decoded by the subclass, and ended with exactly one terminal event.
 *
 * @module
 */
import { DEFAULT_REDACTION_TOKEN } from "../redaction/redactor.ts";
import type { Logger } from "@terret/hames";
import { DEFAULT_RETRY_POLICY, REAL_TIMING, type RetryPolicy, type Timing } from "./retry.ts";
import { type RunSettings, StreamRun } from "./_stream_run.ts";
import { IdleWatchdog, untilAborted } from "./_http.ts";
import { estimateTokens, type TokenEstimateCache } from "./token_estimate.ts";
import type {
  HttpTransport,
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
  LlmStreamOptions,
  StreamEvent,
} from "./vocabulary.ts";

/**
 * Turns one response's server-sent events into stream events. A fresh decoder serves each attempt.
 *
 * Contract: `message` gets one server-sent event's data (and its `event` field, when named), appends the events it
 * produces to `out`, and returns true once it appended
 * a terminal event (`message_stop` or `error`); `end` is called when the body ends without one and must append
 * exactly one terminal event. Neither throws for bad input: malformed data becomes an `error` event of kind
 * `protocol`.
 */
export interface StreamDecoder {
  /** Decodes one server-sent event; returns true once a terminal event was appended. */
  message(data: string, out: StreamEvent[], event?: string): boolean;
  /** The body ended without a terminal event: appends exactly one. */
  end(out: StreamEvent[]): void;
}

/** One HTTP request an adapter sends: what `fetch(url, init)` takes, less the signal the base adds. */
export interface HttpRequestParts {
  /** The absolute URL. */
  readonly url: string;
  /** The method (`POST`). */
  readonly method: string;
  /** The request headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** The encoded body. */
  readonly body: string;
}

/** Options common to HTTP adapters. */
export interface HttpAdapterOptions {
  /** Retry policy overrides. */
  readonly retry?: Partial<RetryPolicy>;
  /** The clock for backoff waits (tests inject a fake). */
  readonly timing?: Timing;
  /** Longest wait, in milliseconds, for the response headers and then between two reads (default 600,000). */
  readonly timeoutMs?: number;
  /** The HTTP transport (default `fetch`). */
  readonly transport?: HttpTransport;
  /** Where retries are reported (never with secrets). */
  readonly logger?: Logger;
  /** Strings replaced by the redaction token (`-REDACTED-`) in every message the adapter produces (API keys). */
  readonly secrets?: readonly string[];
}

/**
 * The base of HTTP streaming adapters. Subclasses build the HTTP request and decode server-sent events.
 *
 * Contract: `stream` never throws and never rejects: connect failures, HTTP error statuses, mid-stream provider
 * errors, truncated bodies and malformed data all end the iteration with one `error` event. It retries (up to
 * `maxRetries`) connect failures, retryable statuses (408, 429, 5xx; `Retry-After` honoured up to a cap) and
 * retryable failures inside a 200 stream, but only while nothing but `message_start` has been received: once output
 * has been yielded it reports instead. Aborting the caller's signal cancels the HTTP body at once and ends the
 * stream with an `aborted` error; breaking out of the iteration cancels it too.
 */
export abstract class HttpAdapterBase implements LlmAdapter {
  /** What the model can do. */
  abstract readonly capabilities: LlmCapabilities;
  readonly #policy: RetryPolicy;
  readonly #timing: Timing;
  readonly #timeoutMs: number;
  readonly #watchdog: IdleWatchdog;
  /** A configured transport; `undefined` sends with `fetch` directly. */
  readonly #transport: HttpTransport | undefined;
  readonly #logger: Logger | undefined;
  readonly #secrets: readonly string[];
  /** The sizes of the deeply frozen messages and schemas counted so far (each step counts the history again). */
  readonly #sizes: TokenEstimateCache = new WeakMap();
  /** Read buffers of finished streams, for the next ones. */
  readonly #buffers: Uint8Array[] = [];
  /** One decoder for every stream's reads (each read is decoded whole). */
  readonly #text = new TextDecoder("utf-8", { ignoreBOM: true });

  /**
   * Creates the base with its retry policy, clock, timeout, transport, logger and secrets.
   *
   * @param options retry, timing, timeout, transport, logger and secrets
   */
  constructor(options: HttpAdapterOptions = {}) {
    this.#policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#timing = options.timing ?? REAL_TIMING;
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#watchdog = new IdleWatchdog(this.#timeoutMs);
    this.#transport = options.transport;
    this.#logger = options.logger;
    this.#secrets = (options.secrets ?? []).filter((secret) => secret.length > 0);
  }

  /**
   * Builds the HTTP request of one attempt (called again for each retry). The base sends it with `fetch(url, init)`
   * (no intermediate `Request` object on the hot path), or as a `Request` through a configured transport.
   */
  protected abstract buildRequest(request: LlmRequest): HttpRequestParts;

  /** Creates the decoder for one attempt's response body. */
  protected abstract createDecoder(): StreamDecoder;

  /** Estimates the prompt tokens of `request` (the heuristic of {@linkcode estimateTokens}). */
  countTokens(request: LlmRequest): number {
    return estimateTokens(request, this.#sizes);
  }

  /** Streams one response; see the class contract. */
  stream(request: LlmRequest, options: LlmStreamOptions = {}): AsyncIterable<StreamEvent> {
    const transport = options.transport ?? this.#transport;
    const settings: RunSettings = {
      policy: this.#policy,
      timing: this.#timing,
      timeoutMs: this.#timeoutMs,
      watchdog: this.#watchdog,
      logger: this.#logger,
      send: (signal) => {
        const { url, method, headers, body } = this.buildRequest(request);
        const init = { method, headers, body, signal };
        // `fetch` honours its signal; another transport may not, so its promise is raced against the signal.
        return transport === undefined
          ? fetch(url, init)
          : untilAborted(transport(new Request(url, init)), signal);
      },
      decoder: () => this.createDecoder(),
      redact: (text) => this.redact(text),
      buffers: this.#buffers,
      text: this.#text,
    };
    return new StreamRun(settings, options.signal);
  }

  /** Replaces every configured secret in `text` with the redaction token (`-REDACTED-`, the one marker). */
  protected redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join(DEFAULT_REDACTION_TOKEN);
    return out;
  }
}
