/**
 * Consuming one model stream: `assistant/chunk` appends as deltas arrive (coalesced), and the assistant message's
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
 * Buffers streamed deltas into `assistant/chunk` appends.
 *
 * With `wholeRuns` (a scrubber is registered) a run of one kind is appended as one chunk when it ends, so a secret
 * a provider splits across deltas reaches the scrubber whole. Otherwise the deltas that arrive within one event-loop
 * turn (typically one network read) are appended as one chunk, which keeps the log close to live without one
 * append per delta.
 */
class ChunkBuffer {
  readonly #appender: Appender;
  readonly #wholeRuns: boolean;
  #kind: "text" | "thinking" | undefined;
  #text = "";
  #timer: ReturnType<typeof setImmediate> | undefined;

  constructor(appender: Appender, wholeRuns: boolean) {
    this.#appender = appender;
    this.#wholeRuns = wholeRuns;
  }

  add(kind: "text" | "thinking", text: string): void {
    if (this.#kind !== kind) this.flush(true);
    this.#kind = kind;
    this.#text += text;
    if (!this.#wholeRuns && this.#timer === undefined) {
      this.#timer = setImmediate(() => {
        this.#timer = undefined;
        this.#write(true);
      });
    }
  }

  /**
   * Ends the current run, appending what is buffered: at once (`now`, mid-stream, so it is live), or queued with
   * the events that follow the stream (its end: the same burst as the assistant message).
   */
  flush(now: boolean): void {
    if (this.#timer !== undefined) {
      clearImmediate(this.#timer);
      this.#timer = undefined;
    }
    this.#write(now);
    this.#kind = undefined;
  }

  #write(now: boolean): void {
    if (this.#text === "" || this.#kind === undefined) return;
    const payload = { kind: this.#kind, text: this.#text };
    if (now) this.#appender.appendNow("assistant/chunk", payload);
    else this.#appender.append("assistant/chunk", payload);
    this.#text = "";
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
 * @param wholeRuns coalesce each run into one chunk at its end (a scrubber is registered)
 */
export async function consumeStream(
  events: AsyncIterable<StreamEvent>,
  appender: Appender,
  wholeRuns: boolean,
): Promise<StreamedStep> {
  const chunks = new ChunkBuffer(appender, wholeRuns);
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
