/**
 * Replay: an `llm/stream` middleware that serves recorded HTTP exchanges byte for byte to the real adapter, so its
 * encoding, retries and parsing all run, without a network or a key.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { definePlugin, type Plugin } from "@terret/hames";
import { TerretError } from "../../errors.ts";
import { LlmStream } from "../events.ts";
import type { HttpTransport, LlmRequest, ModelRole } from "../vocabulary.ts";
import {
  type Cassette,
  type CassetteExchange,
  type CassetteInteraction,
  exchangeBytes,
  jsonDifference,
  readCassette,
  requestKey,
} from "./cassette.ts";

/** How requests are matched to recorded interactions. */
export type ReplayMatch = "key" | "sequence";

/** Options of {@linkcode CassettePlayer}. */
export interface CassettePlayerOptions {
  /**
   * `key` (default): a request must equal a recorded one (same role and canonical request); interactions with the
   * same key play in recorded order, the last repeating. `sequence`: interactions play in file order whatever the
   * request, starting over after the last (for demos).
   */
  readonly match?: ReplayMatch;
  /** The cassette's name, for messages. */
  readonly source?: string;
}

/** Picks the recorded interaction that answers each request. */
export class CassettePlayer {
  readonly #cassette: Cassette;
  readonly #match: ReplayMatch;
  readonly #source: string;
  readonly #byKey = new Map<string, CassetteInteraction[]>();
  readonly #cursor = new Map<string, number>();
  readonly #played = new Set<CassetteInteraction>();
  #sequence = 0;

  /**
   * Indexes a cassette's interactions by key.
   *
   * @param cassette the parsed cassette
   * @param options how to match, and the name for messages
   */
  constructor(cassette: Cassette, options: CassettePlayerOptions = {}) {
    this.#cassette = cassette;
    this.#match = options.match ?? "key";
    this.#source = options.source ?? "cassette";
    for (const interaction of cassette.interactions) {
      const list = this.#byKey.get(interaction.key) ?? [];
      list.push(interaction);
      this.#byKey.set(interaction.key, list);
    }
  }

  /** How many requests have been answered. */
  get played(): number {
    return this.#sequence;
  }

  /**
   * The interaction answering `request`.
   *
   * @throws {TerretError} `CassetteMismatch` when no recorded request matches, naming the first difference from the
   *   next unplayed recorded request
   */
  take(role: ModelRole, request: LlmRequest): CassetteInteraction {
    const all = this.#cassette.interactions;
    if (all.length === 0) {
      throw new TerretError(
        "CassetteMismatch",
        `Cannot replay a model request: cassette "${this.#source}" holds no interactions`,
      );
    }
    let found: CassetteInteraction | undefined;
    if (this.#match === "sequence") found = all[this.#sequence % all.length];
    else {
      const key = requestKey(role, request);
      const list = this.#byKey.get(key);
      if (list === undefined) throw this.#mismatch(key, role, request);
      const cursor = this.#cursor.get(key) ?? 0;
      found = list[Math.min(cursor, list.length - 1)];
      this.#cursor.set(key, cursor + 1);
    }
    this.#sequence++;
    this.#played.add(found!);
    return found!;
  }

  #mismatch(key: string, role: ModelRole, request: LlmRequest): TerretError {
    const all = this.#cassette.interactions;
    const expected = all.find((interaction) => !this.#played.has(interaction)) ?? all.at(-1)!;
    const difference = jsonDifference(
      JSON.parse(JSON.stringify({ role: expected.role, request: expected.request })),
      JSON.parse(JSON.stringify({ role, request })),
      "",
    )?.replace(/^\./, "") ?? "no field (the recorded key is stale: re-record the cassette)";
    return new TerretError(
      "CassetteMismatch",
      `Cannot replay a model request: no interaction in cassette "${this.#source}" matches key ${
        key.slice(0, 12)
      }… (role "${role}", ${request.messages.length} messages); the next recorded request differs at ${difference}`,
      { details: { key, source: this.#source } },
    );
  }
}

/**
 * A transport serving an interaction's recorded exchanges in order, each response body replayed with its recorded
 * bytes and read boundaries and ending as it did (closed, dropped, or held open until the client leaves). An attempt
 * beyond the recorded ones gets an HTTP 400 saying so.
 */
export function replayTransport(
  interaction: CassetteInteraction,
  source = "cassette",
): HttpTransport {
  let attempt = 0;
  return function replay(request: Request): Promise<Response> {
    const exchange = interaction.exchanges[attempt++];
    if (exchange === undefined) {
      const message =
        `Cannot replay a model request from cassette "${source}": it recorded ${interaction.exchanges.length} HTTP attempts and the adapter made another`;
      return Promise.resolve(Response.json({ error: { code: 400, message } }, { status: 400 }));
    }
    if (exchange.status === undefined) return Promise.reject(new TypeError(exchange.error));
    const body = replayBody(exchange, request.signal);
    return Promise.resolve(
      new Response(body, { status: exchange.status ?? 200, headers: exchange.headers ?? {} }),
    );
  };
}

function replayBody(exchange: CassetteExchange, signal: AbortSignal): ReadableStream<Uint8Array> {
  const bytes = exchangeBytes(exchange);
  const reads = exchange.reads ?? [bytes.byteLength];
  let offset = 0;
  let read = 0;
  let release: (() => void) | undefined;
  const end = exchange.end ?? "complete";
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const onAbort = (): void => {
        release?.();
        try {
          controller.error(signal.reason);
        } catch {
          // Already closed.
        }
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      release = () => signal.removeEventListener("abort", onAbort);
    },
    pull(controller): Promise<void> | undefined {
      if (offset < bytes.byteLength) {
        const size = read < reads.length ? reads[read++]! : bytes.byteLength - offset;
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
        return undefined;
      }
      if (end === "complete") {
        release?.();
        controller.close();
      } else if (end === "dropped") {
        release?.();
        controller.error(new TypeError(exchange.error ?? "error reading a body from connection"));
      } else {
        return new Promise<void>(() => {}); // "open": hold until the client aborts or cancels
      }
      return undefined;
    },
    cancel() {
      release?.();
    },
  });
}

/** Config of {@linkcode llmReplayer}. */
export interface ReplayerConfig {
  /** The cassette: a file path or a `file:`/`https:` URL. */
  readonly path: string;
  /** How requests are matched (default `key`). */
  readonly match: ReplayMatch;
}

/** The zod schema of {@linkcode ReplayerConfig}. */
export const ReplayerConfigSchema: z.ZodType<ReplayerConfig> = z.object({
  path: z.string().min(1).describe("The cassette: a file path or a `file:`/`https:` URL"),
  match: z.enum(["key", "sequence"]).default("key").describe(
    "`key`: a request must equal a recorded one; `sequence`: play in file order, starting over (demos)",
  ),
}).strict();

/**
 * Replays a cassette: every model request passing through `llm/stream` is answered from the recording, served
 * byte for byte through the adapter registered for the role (its encoding, retries and parsing run for real; no
 * request leaves the process).
 *
 * Contract: a request that matches no recorded interaction makes `stream()` throw `CassetteMismatch` naming the
 * first difference; the adapter still needs a role registration (any key will do, none is sent anywhere).
 * Host permissions: `read` of the cassette (or `net` to its host for an `https:` URL).
 */
export const llmReplayer: Plugin<ReplayerConfig> = definePlugin({
  name: "terret-llm-replayer",
  description:
    "Answers model requests from a recorded cassette, byte for byte (llm/stream middleware)",
  config: ReplayerConfigSchema,
  permissions: (config) => {
    if (config.path.startsWith("file:")) return { read: [fileURLToPath(config.path)] };
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(config.path)) return { net: [new URL(config.path).host] };
    return { read: [config.path] };
  },
  async apply(ctx, config) {
    const cassette = await readCassette(config.path);
    const source = config.path.split("/").at(-1) ?? config.path;
    const player = new CassettePlayer(cassette, { match: config.match, source });
    ctx.on(LlmStream, (payload, next) => {
      const interaction = player.take(payload.role, payload.request);
      return next({ ...payload, transport: replayTransport(interaction, source) });
    });
  },
});
