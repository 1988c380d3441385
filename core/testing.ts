/**
 * Test helpers for code that talks to models: a fake OpenRouter server (a real HTTP server on 127.0.0.1 serving
 * scripted server-sent event byte streams), builders for OpenRouter-shaped chunks and whole turns, and the shipped
 * cassettes.
 *
 * @example
 * ```ts ignore
 * import { fakeOpenRouter, sseResponse, textTurn } from "@terret/core/testing";
 * import { OpenRouterAdapter } from "@terret/core";
 *
 * await using server = await fakeOpenRouter();
 * server.script(sseResponse(textTurn(["Hel", "lo"])));
 * const adapter = new OpenRouterAdapter({ model: "test/model", apiKey: "sk-test", baseUrl: server.url });
 * for await (const event of adapter.stream({ messages: [] })) console.log(event.type);
 * console.log(server.requests[0]!.body); // the Chat Completions body the adapter sent
 * ```
 *
 * @module
 */
import type { Timing } from "./llm/retry.ts";

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

/** A scripted SSE response (status 200) for a transcript made with {@linkcode sse} or a turn builder. */
export function sseResponse(
  transcript: string,
  options: Omit<ScriptedResponse, "body"> = {},
): ScriptedResponse {
  return { ...options, body: transcript };
}

/** A scripted OpenRouter-shaped JSON error: `{"error":{"code":status,"message":…}}`. */
export function jsonError(
  status: number,
  message: string,
  options: { readonly headers?: Readonly<Record<string, string>>; readonly metadata?: unknown } =
    {},
): ScriptedResponse {
  const error = options.metadata === undefined
    ? { code: status, message }
    : { code: status, message, metadata: options.metadata };
  return {
    status,
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify({ error }),
  };
}

/**
 * An SSE transcript: an object becomes a `data:` event of its JSON, `"[DONE]"` the end marker, a string starting
 * with `:` a comment line (a keepalive), and `{ raw }` is written verbatim. Every event ends with a blank line.
 *
 * @example
 * ```ts
 * import { sse } from "@terret/core/testing";
 * sse(": OPENROUTER PROCESSING", { a: 1 }, "[DONE]");
 * // ": OPENROUTER PROCESSING\n\ndata: {\"a\":1}\n\ndata: [DONE]\n\n"
 * ```
 */
export function sse(...items: readonly (object | string)[]): string {
  return items.map((item) => {
    if (typeof item === "string") {
      if (item === "[DONE]") return "data: [DONE]\n\n";
      if (item.startsWith(":")) return `${item}\n\n`;
      throw new TypeError(`Cannot encode SSE item "${item}": use "[DONE]", ": comment" or { raw }`);
    }
    if ("raw" in item && typeof item.raw === "string") return item.raw;
    return `data: ${JSON.stringify(item)}\n\n`;
  }).join("");
}

/** Identity fields of scripted chunks. */
export interface ChunkOptions {
  readonly id?: string;
  readonly model?: string;
  readonly provider?: string;
  readonly created?: number;
  readonly finish_reason?: string | null;
  readonly native_finish_reason?: string | null;
}

const DEFAULTS = {
  id: "gen-1764430000-test",
  model: "test/model",
  provider: "Test",
  created: 1764430000,
};

/** One OpenRouter stream chunk with a single choice carrying `delta`. */
export function chunk(
  delta: Readonly<Record<string, unknown>>,
  options: ChunkOptions = {},
): Record<string, unknown> {
  return {
    id: options.id ?? DEFAULTS.id,
    provider: options.provider ?? DEFAULTS.provider,
    model: options.model ?? DEFAULTS.model,
    object: "chat.completion.chunk",
    created: options.created ?? DEFAULTS.created,
    choices: [{
      index: 0,
      delta,
      finish_reason: options.finish_reason ?? null,
      native_finish_reason: options.native_finish_reason ?? null,
    }],
  };
}

/** Usage figures of {@linkcode usageChunk}. */
export interface UsageFigures {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly cost?: number;
  readonly cached_tokens?: number;
  readonly reasoning_tokens?: number;
}

/** OpenRouter's final usage chunk (empty `choices`). */
export function usageChunk(
  usage: UsageFigures,
  options: ChunkOptions = {},
): Record<string, unknown> {
  return {
    id: options.id ?? DEFAULTS.id,
    provider: options.provider ?? DEFAULTS.provider,
    model: options.model ?? DEFAULTS.model,
    object: "chat.completion.chunk",
    created: options.created ?? DEFAULTS.created,
    choices: [],
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      cost: usage.cost ?? 0,
      is_byok: false,
      prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    },
  };
}

/** Options of the turn builders. */
export interface TurnOptions extends ChunkOptions {
  /** The usage chunk's figures (default 10 prompt, 5 completion tokens, no cost). */
  readonly usage?: UsageFigures;
  /** Start with a `: OPENROUTER PROCESSING` keepalive (default true). */
  readonly keepalive?: boolean;
}

/** A whole plain text turn: keepalive, one chunk per piece, a `stop` finish, usage, `[DONE]`. */
export function textTurn(pieces: string | readonly string[], options: TurnOptions = {}): string {
  const texts = typeof pieces === "string" ? [pieces] : pieces;
  return sse(
    ...(options.keepalive === false ? [] : [": OPENROUTER PROCESSING"]),
    ...texts.map((text) => chunk({ role: "assistant", content: text }, options)),
    chunk({ role: "assistant", content: "" }, {
      ...options,
      finish_reason: "stop",
      native_finish_reason: "stop",
    }),
    usageChunk(options.usage ?? { prompt_tokens: 10, completion_tokens: 5 }, options),
    "[DONE]",
  );
}

/** One tool call of {@linkcode toolCallTurn}. */
export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** The arguments: an object (sent as JSON) or the raw argument text. */
  readonly args: Readonly<Record<string, unknown>> | string;
  /** Into how many fragments the argument text is split (default 2). */
  readonly fragments?: number;
}

/**
 * A whole tool-calling turn: optional text first, then each call (a header fragment with id and name, then its
 * argument fragments), a `tool_calls` finish, usage, `[DONE]`.
 */
export function toolCallTurn(
  calls: readonly ScriptedToolCall[],
  options: TurnOptions & { readonly text?: string } = {},
): string {
  const items: object[] = [];
  if (options.text !== undefined) {
    items.push(chunk({ role: "assistant", content: options.text }, options));
  }
  calls.forEach((call, index) => {
    const header = {
      index,
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: "" },
    };
    items.push(chunk({ role: "assistant", content: null, tool_calls: [header] }, options));
    const text = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
    const count = Math.max(1, call.fragments ?? 2);
    const size = Math.ceil(text.length / count);
    for (let offset = 0; offset < text.length; offset += size) {
      const fragment = { index, function: { arguments: text.slice(offset, offset + size) } };
      items.push(chunk({ tool_calls: [fragment] }, options));
    }
  });
  items.push(
    chunk({}, { ...options, finish_reason: "tool_calls", native_finish_reason: "tool_calls" }),
  );
  items.push(usageChunk(options.usage ?? { prompt_tokens: 10, completion_tokens: 5 }, options));
  return sse(
    ...(options.keepalive === false ? [] : [": OPENROUTER PROCESSING"]),
    ...items,
    "[DONE]",
  );
}

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

/**
 * The example transcripts of PROTOCOLS.md §1.10, byte for byte, plus a reasoning turn: what OpenRouter sends for a
 * plain text turn, a parallel two-tool-call turn (fragments interleaved by `index`), a mid-stream error at HTTP 200,
 * and a reasoning turn (`reasoning` deltas, `reasoning_details` with a signature, then text).
 */
export const TRANSCRIPTS: Readonly<{
  plainText: string;
  parallelTools: string;
  midStreamError: string;
  reasoning: string;
}> = Object.freeze({
  plainText: [
    ": OPENROUTER PROCESSING",
    "",
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null,"native_finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":" — how can I help?"},"finish_reason":null,"native_finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"end_turn"}]}',
    "",
    'data: {"id":"gen-1764430000-k3Xq","provider":"Anthropic","model":"anthropic/claude-sonnet-4.5","object":"chat.completion.chunk","created":1764430000,"choices":[],"usage":{"prompt_tokens":1830,"completion_tokens":9,"total_tokens":1839,"cost":0.005625,"is_byok":false,"prompt_tokens_details":{"cached_tokens":1536,"cache_write_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  parallelTools: [
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"path\\":\\"src/"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_B2","type":"function","function":{"name":"grep","arguments":""}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"main.ts\\"}"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\\"pattern\\":\\"TODO\\",\\"dir\\":\\".\\"}"}}]},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls","native_finish_reason":"tool_calls"}]}',
    "",
    'data: {"id":"gen-1764430100-Pq7w","provider":"OpenAI","model":"openai/gpt-5.2","object":"chat.completion.chunk","created":1764430100,"choices":[],"usage":{"prompt_tokens":2410,"completion_tokens":41,"total_tokens":2451,"cost":0.00343,"prompt_tokens_details":{"cached_tokens":2048},"completion_tokens_details":{"reasoning_tokens":0}}}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  midStreamError: [
    ": OPENROUTER PROCESSING",
    "",
    'data: {"id":"gen-1764430200-Zz9e","provider":"DeepInfra","model":"qwen/qwen3-235b-a22b","object":"chat.completion.chunk","created":1764430200,"choices":[{"index":0,"delta":{"role":"assistant","content":"Here is the refactored"},"finish_reason":null}]}',
    "",
    'data: {"id":"gen-1764430200-Zz9e","provider":"DeepInfra","model":"qwen/qwen3-235b-a22b","object":"chat.completion.chunk","created":1764430200,"error":{"code":502,"message":"Provider disconnected unexpectedly","metadata":{"error_type":"provider_unavailable","provider_code":"upstream_disconnect"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}',
    "",
    "data: [DONE]",
    "",
    "",
  ].join("\n"),
  reasoning: sse(
    ": OPENROUTER PROCESSING",
    chunk({
      role: "assistant",
      content: "",
      reasoning: "The user wants ",
      reasoning_details: [{
        type: "reasoning.text",
        text: "The user wants ",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk({
      role: "assistant",
      content: "",
      reasoning: "a haiku — short.",
      reasoning_details: [{
        type: "reasoning.text",
        text: "a haiku — short.",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk({
      role: "assistant",
      content: "",
      reasoning_details: [{
        type: "reasoning.text",
        signature: "EqQBCkYIARgCIkD1sig==",
        format: "anthropic-claude-v1",
        index: 0,
      }],
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    chunk(
      { role: "assistant", content: "Autumn moonlight —\n" },
      { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" },
    ),
    chunk(
      { role: "assistant", content: "a worm digs silently 🌙" },
      { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" },
    ),
    chunk({ role: "assistant", content: "" }, {
      id: "gen-1764430300-Rz1",
      model: "anthropic/claude-sonnet-4.5",
      provider: "Anthropic",
      finish_reason: "stop",
      native_finish_reason: "end_turn",
    }),
    usageChunk({
      prompt_tokens: 52,
      completion_tokens: 31,
      cost: 0.000621,
      cached_tokens: 0,
      reasoning_tokens: 12,
    }, { id: "gen-1764430300-Rz1", model: "anthropic/claude-sonnet-4.5", provider: "Anthropic" }),
    "[DONE]",
  ),
});

/**
 * The cassettes shipped with `@terret/core` (see `core/llm/cassette/cassette.ts` for the format):
 * `plainText`, one text answer; `toolTurn`, a two-request Read tool turn (the model asks to read `README.md`, then
 * answers from the result). Use them with `llmReplayer` (`path: CASSETTES.toolTurn.href`).
 */
export const CASSETTES: Readonly<{ plainText: URL; toolTurn: URL }> = Object.freeze({
  plainText: new URL("./llm/testdata/plain_text.jsonl", import.meta.url),
  toolTurn: new URL("./llm/testdata/tool_turn.jsonl", import.meta.url),
});
