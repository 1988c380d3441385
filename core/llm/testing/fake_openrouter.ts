/**
 * The fake OpenRouter: a real HTTP server on 127.0.0.1 serving scripted server-sent event byte streams.
 *
 * @module
 */
import { jsonError } from "./wire.ts";

/**
 * One scripted HTTP response.
 *
 * The body is written in pieces: `chunks` as a number writes pieces of that many bytes; as a list, pieces of those
 * sizes in turn (the rest in one last piece). TCP may coalesce writes into one read unless `delayMs` separates
 * them; for exact read boundaries inject a transport instead.
 */
export interface ScriptedResponse {
  /** The HTTP status (default 200). */
  readonly status?: number;
  /** Response headers (default `content-type: text/event-stream` for 200, `application/json` otherwise). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body (default empty). */
  readonly body?: string | Uint8Array;
  /** How the body is split into writes (default: one write). */
  readonly chunks?: number | readonly number[];
  /** Milliseconds to wait before each write after the first (default 0). */
  readonly delayMs?: number;
  /**
   * How the response ends after the body: `close` (default) finishes it; `drop` fails the connection (the client's
   * read errors); `hold` keeps it open until the client goes away or the server closes.
   */
  readonly end?: "close" | "drop" | "hold";
}

/** What the fake server saw of one request. */
export interface ReceivedRequest {
  /** The HTTP method. */
  readonly method: string;
  /** The path, e.g. `/api/v1/chat/completions`. */
  readonly path: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  readonly body: unknown;
  /** When the request arrived (`performance.now()`). */
  readonly at: number;
}

/** How a served response ended: written out, left by the client, or dropped by the script. */
export type ExchangeEnd = "completed" | "client_closed" | "dropped";

/** One request and the fate of its response. */
export interface FakeExchange {
  /** What was asked. */
  readonly request: ReceivedRequest;
  /** Settles when the response stream ends, saying how. */
  readonly ended: Promise<ExchangeEnd>;
}

/** A response script: a fixed response, or a function of the request. */
export type Script = ScriptedResponse | ((request: ReceivedRequest) => ScriptedResponse);

/**
 * A running fake OpenRouter: serves scripted responses in order, one per request, and records what it received.
 * A request with no script left gets HTTP 400 with an OpenRouter-shaped error naming it.
 */
export interface FakeOpenRouter extends AsyncDisposable {
  /** The API root to configure as `base_url` (`http://127.0.0.1:<port>/api/v1`). */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: readonly ReceivedRequest[];
  /** Every exchange, in order. */
  readonly exchanges: readonly FakeExchange[];
  /** Queues responses for the next requests, in order. */
  script(...responses: Script[]): void;
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (default 5,000). */
  waitForRequests(count: number, options?: { readonly timeoutMs?: number }): Promise<void>;
  /** Ends held responses and stops the server. */
  close(): Promise<void>;
}

/**
 * Starts a fake OpenRouter on `127.0.0.1` with a free port.
 *
 * Contract: every response stream is ended by `close()` (held ones included), so a test that disposes the server
 * leaves no open resources once its clients have finished reading or cancelled.
 */
export function fakeOpenRouter(): Promise<FakeOpenRouter> {
  const queue: Script[] = [];
  const requests: ReceivedRequest[] = [];
  const exchanges: FakeExchange[] = [];
  const active = new Set<() => void>();
  const waiters = new Set<() => void>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    onError: () => new Response(null, { status: 500 }),
  }, async (request) => {
    const received = await receive(request);
    requests.push(received);
    for (const wake of waiters) wake();
    const script = queue.shift();
    const response = script === undefined
      ? unscripted(requests.length, received)
      : typeof script === "function"
      ? script(received)
      : script;
    const served = serve(response, active);
    exchanges.push({ request: received, ended: served.ended });
    return served.response;
  });
  const url = `http://127.0.0.1:${server.addr.port}/api/v1`;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const end of [...active]) end();
      await server.shutdown();
    })();
    return closing;
  };
  return Promise.resolve({
    url,
    requests,
    exchanges,
    script: (...responses) => void queue.push(...responses),
    waitForRequests: (count, options = {}) =>
      waitFor(() => requests.length >= count, waiters, options.timeoutMs ?? 5_000, count),
    close,
    [Symbol.asyncDispose]: close,
  });
}

async function receive(request: Request): Promise<ReceivedRequest> {
  const at = performance.now();
  const text = await request.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Keep the raw text.
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => void (headers[name] = value));
  return { method: request.method, path: new URL(request.url).pathname, headers, body, at };
}

function unscripted(number: number, request: ReceivedRequest): ScriptedResponse {
  return jsonError(
    400,
    `fakeOpenRouter: no response scripted for request ${number} (${request.method} ${request.path})`,
  );
}

function waitFor(
  done: () => boolean,
  waiters: Set<() => void>,
  timeoutMs: number,
  count: number,
): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      waiters.delete(check);
      if (error === undefined) resolve();
      else reject(error);
    };
    const check = (): void => {
      if (done()) finish();
    };
    const timer = setTimeout(
      () => finish(new Error(`fakeOpenRouter: fewer than ${count} requests after ${timeoutMs} ms`)),
      timeoutMs,
    );
    waiters.add(check);
  });
}

function serve(
  script: ScriptedResponse,
  active: Set<() => void>,
): { response: Response; ended: Promise<ExchangeEnd> } {
  const status = script.status ?? 200;
  const headers = new Headers(script.headers ?? {});
  if (!headers.has("content-type")) {
    headers.set("content-type", status === 200 ? "text/event-stream" : "application/json");
  }
  const bytes = typeof script.body === "string"
    ? new TextEncoder().encode(script.body)
    : script.body ?? new Uint8Array();
  const pieces = split(bytes, script.chunks);
  let settle: (end: ExchangeEnd) => void = () => {};
  const ended = new Promise<ExchangeEnd>((resolve) => settle = resolve);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  let next = 0;
  let controller: ReadableStreamDefaultController<Uint8Array>;
  const finish = (how: ExchangeEnd): void => {
    if (timer !== undefined) clearTimeout(timer);
    active.delete(stop);
    wake?.();
    settle(how);
  };
  const stop = (): void => {
    try {
      controller.close();
    } catch {
      // Already ended.
    }
    finish("completed");
  };
  active.add(stop);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      if (next > 0 && next < pieces.length && (script.delayMs ?? 0) > 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, script.delayMs);
        });
        if (!active.has(stop)) return;
      }
      if (next < pieces.length) {
        c.enqueue(pieces[next++]!);
        return;
      }
      const end = script.end ?? "close";
      if (end === "close") {
        c.close();
        finish("completed");
      } else if (end === "drop") {
        c.error(undefined);
        finish("dropped");
      } else {
        await new Promise<void>((resolve) => wake = resolve);
      }
    },
    cancel() {
      finish("client_closed");
    },
  });
  return { response: new Response(body, { status, headers }), ended };
}

function split(bytes: Uint8Array, chunks: number | readonly number[] | undefined): Uint8Array[] {
  if (bytes.byteLength === 0) return [];
  if (chunks === undefined) return [bytes];
  const sizes = typeof chunks === "number" ? [] : chunks;
  const pieces: Uint8Array[] = [];
  let offset = 0;
  let index = 0;
  while (offset < bytes.byteLength) {
    const size = typeof chunks === "number"
      ? chunks
      : index < sizes.length
      ? sizes[index++]!
      : bytes.byteLength - offset;
    if (!(size > 0)) {
      throw new RangeError(`Cannot split a scripted body: piece size ${size} is not positive`);
    }
    pieces.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return pieces;
}
