/**
 * Consuming one model stream: `assistant/chunk` appends as deltas arrive (coalesced per event-loop turn, cut only where the scrubbers allow), and the assistant message's
 * parts, tool calls, usage and finish reason collected for the step. Internal to the loop.
 *
 * @module
 */
import { clearImmediate, setImmediate } from "node:timers";
import type { Part, StreamEvent, StreamFailure, Usage } from "../llm/vocabulary.ts";
import type { ToolCallRequest } from "../tools/tool_registry.ts";
import type { Appender } from "./_appender.ts";

/** What one stream produced. */
export interface StreamedStep {
  /** The assistant message's parts, in the order they arrived. */
  readonly parts: Part[];
  /** The tool calls, in the order the model made them. */
  readonly calls: ToolCallRequest[];
  /** The usage reported (zeros when none was). */
  readonly usage: Usage;
  /** The finish reason (`error` when the stream failed). */
  readonly finish: string;
  /** The failure the stream ended with, if any. */
  readonly error: StreamFailure | undefined;
}

/**
 * How much of a run of streamed text may be appended now (the rest is held until more arrives or the run ends):
 * the sessions service's `safePrefix`, so no cut falls inside a secret a scrubber replaces.
 */
export type SafePrefix = (text: string) => number;

/**
 * Buffers streamed deltas into `assistant/chunk` appends.
 *
 * The deltas that arrive within one event-loop turn (typically one network read) are appended as one chunk, which
 * keeps the log close to live without one append per delta. While a scrubber is registered, only the prefix the
 * scrubbers call safe is appended; the held tail (what could still be the start of a secret) waits for the next
 * delta or the run's end, so a secret a provider splits across deltas reaches the scrubber whole.
 */
class ChunkBuffer {
  readonly #appender: Appender;
  readonly #safePrefix: SafePrefix | undefined;
  #kind: "text" | "thinking" | undefined;
  #text = "";
  #timer: ReturnType<typeof setImmediate> | undefined;

  constructor(appender: Appender, safePrefix: SafePrefix | undefined) {
    this.#appender = appender;
    this.#safePrefix = safePrefix;
  }

  add(kind: "text" | "thinking", text: string): void {
    if (this.#kind !== kind) this.flush(true);
    this.#kind = kind;
    this.#text += text;
    if (this.#timer === undefined) {
      this.#timer = setImmediate(() => {
        this.#timer = undefined;
        this.#write(true, false);
      });
    }
  }

  /**
   * Ends the current run, appending everything buffered (the held tail included): at once (`now`, mid-stream, so
   * it is live), or queued with the events that follow the stream (its end: the same burst as the assistant
   * message).
   */
  flush(now: boolean): void {
    if (this.#timer !== undefined) {
      clearImmediate(this.#timer);
      this.#timer = undefined;
    }
    this.#write(now, true);
    this.#kind = undefined;
  }

  #write(now: boolean, whole: boolean): void {
    if (this.#text === "" || this.#kind === undefined) return;
    const length = whole || this.#safePrefix === undefined
      ? this.#text.length
      : Math.min(this.#text.length, this.#safePrefix(this.#text));
    if (length <= 0) return;
    const payload = { kind: this.#kind, text: this.#text.slice(0, length) };
    if (now) this.#appender.appendNow("assistant/chunk", payload);
    else this.#appender.append("assistant/chunk", payload);
    this.#text = this.#text.slice(length);
  }
}

/** Builds the assistant message's parts from runs of text and thinking and the tool calls between them. */
class PartsBuilder {
  readonly parts: Part[] = [];
  #kind: "text" | "thinking" | undefined;
  #text = "";
  #signature: string | undefined;

  add(kind: "text" | "thinking", text: string, signature?: string): void {
    if (this.#kind !== kind) this.close();
    this.#kind = kind;
    this.#text += text;
    if (signature !== undefined) this.#signature = signature;
  }

  close(): void {
    if (this.#kind === "text" && this.#text !== "") {
      this.parts.push({ type: "text", text: this.#text });
    } else if (this.#kind === "thinking" && (this.#text !== "" || this.#signature !== undefined)) {
      this.parts.push(
        this.#signature === undefined
          ? { type: "thinking", text: this.#text }
          : { type: "thinking", text: this.#text, signature: this.#signature },
      );
    }
    this.#kind = undefined;
    this.#text = "";
    this.#signature = undefined;
  }
}

/**
 * Reads a model stream to its end, appending chunks as it goes.
 *
 * @param events the stream (the `llm/stream` chain's result)
 * @param appender where chunks go
 * @param safePrefix how much of a run may be appended before it ends (`undefined`: all of it, no scrubber)
 */
export async function consumeStream(
  events: AsyncIterable<StreamEvent>,
  appender: Appender,
  safePrefix: SafePrefix | undefined,
): Promise<StreamedStep> {
  const chunks = new ChunkBuffer(appender, safePrefix);
  const builder = new PartsBuilder();
  const calls: ToolCallRequest[] = [];
  let usage: Usage = { input_tokens: 0, output_tokens: 0 };
  let finish = "other";
  let error: StreamFailure | undefined;
  try {
    for await (const event of events) {
      switch (event.type) {
        case "text_delta":
          if (event.text === "") break;
          chunks.add("text", event.text);
          builder.add("text", event.text);
          break;
        case "thinking_delta":
          if (event.text !== "") chunks.add("thinking", event.text);
          builder.add("thinking", event.text, event.signature);
          break;
        case "tool_call_start":
          chunks.flush(true);
          builder.close();
          break;
        case "tool_call_end": {
          const args = event.args ?? {};
          const part: Part = event.argsError === undefined
            ? { type: "tool_call", id: event.id, name: event.name, args }
            : {
              type: "tool_call",
              id: event.id,
              name: event.name,
              args,
              args_error: event.argsError,
            } as Part;
          builder.parts.push(part);
          calls.push(
            event.argsError === undefined
              ? { id: event.id, name: event.name, args }
              : { id: event.id, name: event.name, args, argsError: event.argsError },
          );
          break;
        }
        case "usage":
          usage = event.usage;
          break;
        case "message_stop":
          finish = event.finishReason;
          break;
        case "error":
          error = event.error;
          finish = "error";
          break;
      }
    }
  } finally {
    chunks.flush(false);
    builder.close();
  }
  return { parts: builder.parts, calls, usage, finish, error };
}
