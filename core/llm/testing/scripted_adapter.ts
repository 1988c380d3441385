/**
 * A scripted model adapter: a faithful {@linkcode LlmAdapter} that answers each request with the next declarative
 * script (exact stream events, optionally pausing at named gates), records every request, and honours aborts the
 * way a real adapter does.
 *
 * @module
 */
import { clearImmediate, setImmediate } from "node:timers";
import { estimateTokens } from "../token_estimate.ts";
import { toolCallEnd } from "../tool_call_end.ts";
import type {
  FinishReason,
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
  LlmStreamOptions,
  StreamEvent,
  StreamFailure,
  Usage,
} from "../vocabulary.ts";

/** A pause in a script: the stream waits at this point until {@linkcode ScriptedAdapter.open} opens the gate. */
export interface ScriptGate {
  readonly type: "gate";
  /** The gate's name. */
  readonly gate: string;
}

/** One item of a response script: a stream event yielded as is, or a gate. */
export type ScriptItem = StreamEvent | ScriptGate;

/** A response: the items to yield, or a function of the request (and its 0-based index) returning them. */
export type ResponseScript =
  | readonly ScriptItem[]
  | ((request: LlmRequest, index: number) => readonly ScriptItem[]);

/** Options of the reply builders. */
export interface ReplyOptions {
  /** The usage reported (default 10 input, 5 output tokens); `null` reports none. */
  readonly usage?: Usage | null;
  /** The finish reason (default `stop`, or `tool_calls` when the reply calls tools). */
  readonly finish?: FinishReason;
}

/** A tool call of {@linkcode toolCallsReply}. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  /** The arguments object, or the raw text the model sent when it is not valid JSON. */
  readonly args: Readonly<Record<string, unknown>> | string;
}

const DEFAULT_USAGE: Usage = { input_tokens: 10, output_tokens: 5 };

function ending(options: ReplyOptions, finish: FinishReason): ScriptItem[] {
  const usage = options.usage === undefined ? DEFAULT_USAGE : options.usage;
  return [
    ...(usage === null ? [] : [{ type: "usage" as const, usage }]),
    { type: "message_stop", finishReason: options.finish ?? finish },
  ];
}

/** A text answer: `message_start`, one `text_delta` per piece, usage, `message_stop`. */
export function textReply(
  pieces: string | readonly string[],
  options: ReplyOptions = {},
): ScriptItem[] {
  const texts = typeof pieces === "string" ? [pieces] : pieces;
  return [
    { type: "message_start" },
    ...texts.map((text): ScriptItem => ({ type: "text_delta", text })),
    ...ending(options, "stop"),
  ];
}

/**
 * A tool-calling answer: optional text, then for each call `tool_call_start`, one `tool_call_delta` with its
 * argument text and `tool_call_end` (with `argsError` when `args` is a string that is not a JSON object), usage and
 * `message_stop` (`tool_calls`).
 */
export function toolCallsReply(
  calls: readonly ScriptedCall[],
  options: ReplyOptions & { readonly text?: string } = {},
): ScriptItem[] {
  const items: ScriptItem[] = [{ type: "message_start" }];
  if (options.text !== undefined) items.push({ type: "text_delta", text: options.text });
  calls.forEach((call, index) => {
    const raw = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
    items.push({ type: "tool_call_start", index, id: call.id, name: call.name });
    items.push({ type: "tool_call_delta", index, argsDelta: raw });
    items.push(toolCallEnd(index, call.id, call.name, raw));
  });
  return [...items, ...ending(options, "tool_calls")];
}

/** A failed response: the given items (default just `message_start`), then the `error` event. */
export function errorReply(
  error: StreamFailure,
  before: readonly ScriptItem[] = [{ type: "message_start" }],
): ScriptItem[] {
  return [...before, { type: "error", error }];
}

/** Options of {@linkcode scriptedAdapter}. */
export interface ScriptedAdapterOptions {
  /** Capability overrides (default: tools, a 128k window). */
  readonly capabilities?: Partial<LlmCapabilities>;
}

/** A scripted adapter and its controls. */
export interface ScriptedAdapter extends LlmAdapter {
  /** Every request received, in order. */
  readonly requests: readonly LlmRequest[];
  /** How many requests are still scripted. */
  readonly remaining: number;
  /** Queues responses for the next requests, in order. */
  script(...responses: ResponseScript[]): void;
  /** Opens a gate: streams waiting at it (now or later) go on. */
  open(gate: string): void;
  /** Resolves once a stream is waiting at `gate` (rejects after `timeoutMs`, default 5,000). */
  reached(gate: string, timeoutMs?: number): Promise<void>;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`, default 5,000). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
}

/**
 * Creates a scripted adapter answering requests with `responses` in order.
 *
 * Contract (the {@linkcode LlmAdapter} contract, kept faithfully): `stream` never throws; a request with no script
 * left ends with an `http` error (status 400) naming it, as the fake OpenRouter server does; aborting the signal, at
 * any point including a gate, ends the stream at once with an `aborted` error; items after an `error` or
 * `message_stop` are not yielded. Each event is yielded after a macrotask turn (as if each came in its own network
 * read), so the consumer's own scheduling is exercised. A gate once reached stays reached; once opened, open.
 *
 * @example
 * ```ts
 * import { scriptedAdapter, textReply } from "@terret/core/testing";
 * const adapter = scriptedAdapter([textReply(["Hel", "lo"])]);
 * for await (const event of adapter.stream({ messages: [] })) console.log(event.type);
 * ```
 */
export function scriptedAdapter(
  responses: readonly ResponseScript[] = [],
  options: ScriptedAdapterOptions = {},
): ScriptedAdapter {
  const queue: ResponseScript[] = [...responses];
  const requests: LlmRequest[] = [];
  const opened = new Set<string>();
  const gateWaiters = new Map<string, Set<() => void>>();
  const reachWaiters = new Map<string, Set<() => void>>();
  const reached = new Set<string>();
  const requestWaiters = new Set<() => void>();
  const capabilities: LlmCapabilities = Object.freeze({
    tools: true,
    vision: false,
    thinking: false,
    caching: false,
    maxContextTokens: 128_000,
    ...options.capabilities,
  });

  const wake = (map: Map<string, Set<() => void>>, gate: string): void => {
    for (const resume of map.get(gate) ?? []) resume();
    map.delete(gate);
  };

  async function* stream(
    request: LlmRequest,
    streamOptions: LlmStreamOptions = {},
  ): AsyncGenerator<StreamEvent> {
    const signal = streamOptions.signal;
    const index = requests.length;
    requests.push(request);
    for (const check of [...requestWaiters]) check();
    const script = queue.shift();
    const items = script === undefined
      ? [{
        type: "error" as const,
        error: {
          kind: "http" as const,
          status: 400,
          message: `scriptedAdapter: no response scripted for request ${index + 1}`,
          retryable: false,
        },
      }]
      : typeof script === "function"
      ? script(request, index)
      : script;
    const aborted = (): StreamEvent => ({
      type: "error",
      error: { kind: "aborted", message: "The request was aborted", retryable: false },
    });
    for (const item of items) {
      if (signal?.aborted) return yield aborted();
      if (item.type === "gate") {
        reached.add(item.gate);
        wake(reachWaiters, item.gate);
        if (!opened.has(item.gate)) {
          const ok = await waitGate(item.gate, signal);
          if (!ok) return yield aborted();
        }
        continue;
      }
      await macrotask(signal);
      if (signal?.aborted) return yield aborted();
      yield item;
      if (item.type === "error" || item.type === "message_stop") return;
    }
  }

  function waitGate(gate: string, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const waiters = gateWaiters.get(gate) ?? new Set();
      gateWaiters.set(gate, waiters);
      const onAbort = (): void => {
        waiters.delete(go);
        resolve(false);
      };
      const go = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      };
      waiters.add(go);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  function waitFor(
    done: () => boolean,
    register: (check: () => void) => () => void,
    timeoutMs: number,
    what: string,
  ): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let unregister = (): void => {};
      const timer = setTimeout(() => {
        unregister();
        reject(new Error(`scriptedAdapter: ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      unregister = register(() => {
        if (!done()) return;
        clearTimeout(timer);
        unregister();
        resolve();
      });
    });
  }

  return {
    capabilities,
    requests,
    get remaining() {
      return queue.length;
    },
    countTokens: (request) => estimateTokens(request),
    stream,
    script: (...more) => void queue.push(...more),
    open(gate) {
      opened.add(gate);
      wake(gateWaiters, gate);
    },
    reached: (gate, timeoutMs = 5_000) =>
      waitFor(
        () => reached.has(gate),
        (check) => {
          const set = reachWaiters.get(gate) ?? new Set();
          reachWaiters.set(gate, set);
          set.add(check);
          return () => void set.delete(check);
        },
        timeoutMs,
        `no stream reached gate "${gate}"`,
      ),
    waitForRequests: (count, timeoutMs = 5_000) =>
      waitFor(
        () => requests.length >= count,
        (check) => {
          requestWaiters.add(check);
          return () => void requestWaiters.delete(check);
        },
        timeoutMs,
        `fewer than ${count} requests arrived`,
      ),
  };
}

function macrotask(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setImmediate(done);
    function done(): void {
      clearImmediate(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
