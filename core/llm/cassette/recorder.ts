/**
 * Recording: an `llm/stream` middleware that captures every model request's raw HTTP bytes into a cassette.
 *
 * @module
 */
import { z } from "zod";
import { definePlugin, type Logger, type Plugin } from "@terret/hames";
import { LlmStream } from "../events.ts";
import type { HttpTransport, LlmRequest, ModelRole, StreamEvent } from "../vocabulary.ts";
import {
  type CassetteExchange,
  cassetteHeader,
  type CassetteInteraction,
  formatInteraction,
  requestKey,
} from "./cassette.ts";

/** Config of {@linkcode llmRecorder}. */
export interface RecorderConfig {
  /** The cassette file. */
  readonly path: string;
  /** Start a fresh cassette (default), or append to an existing one. */
  readonly overwrite: boolean;
}

/** Appends interactions to a cassette file, one line each, in completion order. */
export class CassetteWriter {
  readonly #path: string;
  #queue: Promise<void>;

  /**
   * Opens (and by default truncates) the cassette.
   *
   * @param path the cassette file
   * @param options `overwrite` truncates and writes a fresh header; otherwise a header is written only when the
   *   file is missing or empty
   */
  constructor(path: string, options: { readonly overwrite?: boolean } = {}) {
    this.#path = path;
    this.#queue = this.#init(options.overwrite ?? true);
  }

  async #init(overwrite: boolean): Promise<void> {
    const header = JSON.stringify(cassetteHeader()) + "\n";
    if (overwrite) return await Deno.writeTextFile(this.#path, header);
    const size = await Deno.stat(this.#path).then((info) => info.size, () => 0);
    if (size === 0) await Deno.writeTextFile(this.#path, header);
  }

  /** Queues one interaction; resolves once it (and everything queued before) is on disk. */
  append(interaction: CassetteInteraction): Promise<void> {
    const line = formatInteraction(interaction);
    this.#queue = this.#queue.then(() => Deno.writeTextFile(this.#path, line, { append: true }));
    return this.#queue;
  }

  /** Resolves once every queued write has finished. */
  flush(): Promise<void> {
    return this.#queue;
  }
}

/** Response headers not worth replaying: transport framing, the clock, cookies. */
const UNRECORDED_HEADERS = new Set([
  "connection",
  "content-length",
  "date",
  "keep-alive",
  "set-cookie",
  "transfer-encoding",
]);

/** A mutable exchange record, filled in as the exchange runs and finished by {@linkcode finishExchanges}. */
export type ExchangeDraft = { -readonly [K in keyof CassetteExchange]: CassetteExchange[K] } & {
  /** The response body's network reads so far. */
  chunks?: Uint8Array[];
};

/**
 * Wraps `inner` so every HTTP attempt is captured into `exchanges`: the request body, the status and headers, every
 * network read of the response (its bytes and boundaries) and how the body ended.
 */
export function recordingTransport(
  inner: HttpTransport,
  exchanges: ExchangeDraft[],
): HttpTransport {
  return async function record(request: Request): Promise<Response> {
    const text = await request.clone().text();
    const url = new URL(request.url);
    url.search = ""; // neither a query string nor userinfo may smuggle a credential into the file
    url.username = "";
    url.password = "";
    const draft: ExchangeDraft = {
      method: request.method,
      url: url.href,
      request_body: parseBody(text),
    };
    exchanges.push(draft);
    let response: Response;
    try {
      response = await inner(request);
    } catch (error) {
      draft.error = error instanceof Error ? error.message : String(error);
      throw error;
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (!UNRECORDED_HEADERS.has(name)) headers[name] = value;
    });
    draft.status = response.status;
    draft.headers = headers;
    draft.chunks = [];
    if (response.body === null) {
      draft.end = "complete";
      return new Response(null, { status: response.status, headers: response.headers });
    }
    return new Response(tap(response.body, draft), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function tap(body: ReadableStream<Uint8Array>, draft: ExchangeDraft): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          draft.end ??= "complete";
          controller.close();
          return;
        }
        draft.chunks!.push(value.slice());
        controller.enqueue(value);
      } catch (error) {
        if (draft.end === undefined) {
          draft.end = "dropped";
          draft.error = error instanceof Error ? error.message : String(error);
        }
        controller.error(error);
      }
    },
    cancel(reason) {
      draft.end ??= "open";
      return reader.cancel(reason);
    },
  });
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Turns drafts into the recorded form: bytes as UTF-8 text (or base64) plus read sizes. */
export function finishExchanges(drafts: readonly ExchangeDraft[]): CassetteExchange[] {
  return drafts.map((draft) => {
    const { chunks, ...rest } = draft;
    if (chunks === undefined) return rest;
    const size = chunks.reduce((total, chunk) => total + chunk.byteLength, 0);
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    const reads = chunks.map((chunk) => chunk.byteLength).filter((length) => length > 0);
    const end = rest.end ?? "open";
    try {
      const body = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      return { ...rest, body, reads, end };
    } catch {
      let binary = "";
      for (const byte of bytes) binary += String.fromCharCode(byte);
      return { ...rest, body_base64: btoa(binary), reads, end };
    }
  });
}

async function* recordStream(
  stream: AsyncIterable<StreamEvent>,
  entry: { role: ModelRole; request: LlmRequest; drafts: ExchangeDraft[] },
  writer: CassetteWriter,
  logger: Logger,
): AsyncGenerator<StreamEvent> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      yield event;
    }
  } finally {
    const interaction: CassetteInteraction = {
      key: requestKey(entry.role, entry.request),
      role: entry.role,
      request: entry.request,
      exchanges: finishExchanges(entry.drafts),
      events,
    };
    await writer.append(interaction).catch((error) =>
      logger.log("error", "Cannot record a model request to the cassette", { error })
    );
  }
}

/** The zod schema of {@linkcode RecorderConfig}. */
export const RecorderConfigSchema: z.ZodType<RecorderConfig> = z.object({
  path: z.string().min(1).describe("The cassette file (JSON Lines)"),
  overwrite: z.boolean().default(true).describe(
    "Start a fresh cassette; false appends to an existing one",
  ),
}).strict();

/**
 * Records every model request that passes through `llm/stream` into a cassette: the request, each HTTP attempt's
 * raw response bytes (read by read) and the events the adapter yielded. An interaction is written when its stream
 * ends (completed, failed, aborted or abandoned); the consumer's iteration finishes only after the write.
 *
 * Contract: it captures through the payload's `transport` (or `fetch` when none is set), so it sees exactly the
 * bytes the adapter parses; it never records request headers (no API key reaches the file). A failed write is
 * logged, never surfaced into the stream. Host permissions: `read` and `write` of the cassette file.
 */
export const llmRecorder: Plugin<RecorderConfig> = definePlugin({
  name: "terret-llm-recorder",
  description:
    "Records every model request's raw HTTP exchange to a cassette (llm/stream middleware)",
  config: RecorderConfigSchema,
  permissions: (config) => ({ read: [config.path], write: [config.path] }),
  async apply(ctx, config) {
    const writer = new CassetteWriter(config.path, { overwrite: config.overwrite });
    await writer.flush();
    ctx.effect(() => () => writer.flush().catch(() => {}), "flush cassette");
    ctx.on(LlmStream, (payload, next) => {
      const drafts: ExchangeDraft[] = [];
      const inner: HttpTransport = payload.transport ?? ((request) => fetch(request));
      const stream = next({ ...payload, transport: recordingTransport(inner, drafts) });
      const entry = { role: payload.role, request: payload.request, drafts };
      return recordStream(stream, entry, writer, ctx.logger);
    });
  },
});
