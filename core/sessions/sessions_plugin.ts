/**
 * The `sessions` plugin: mounts {@linkcode SessionLog} over whatever provides `session_store`.
 *
 * @module
 */
import { type Context, definePlugin, type Plugin } from "@terret/hames";
import { z } from "zod";
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./normalize_payload.ts";
import { SessionLog } from "./session_log.ts";
import { SessionsKey } from "./sessions.ts";
import { SessionStoreKey } from "./store.ts";

/** The sessions plugin's config. */
export interface SessionsConfig {
  /** The payload size cap, in UTF-8 bytes of JSON. */
  readonly max_payload_bytes: number;
  /** Events a slow stream buffers before it catches up from the store instead. */
  readonly stream_buffer_limit: number;
  /** Sessions whose derived model history is cached. */
  readonly history_cache_sessions: number;
  /** Sessions whose usage rollup is cached. */
  readonly usage_cache_sessions: number;
}

/** The sessions plugin's config schema. */
export const sessionsConfig: z.ZodType<SessionsConfig> = z.object({
  max_payload_bytes: z.number().int().min(1024).default(DEFAULT_MAX_PAYLOAD_BYTES).describe(
    "Largest accepted event payload, in UTF-8 bytes of its JSON; a larger append is refused (PayloadTooLarge)",
  ),
  stream_buffer_limit: z.number().int().min(1).default(10_000).describe(
    "Events a slow stream reader may buffer before it catches up from the store instead",
  ),
  history_cache_sessions: z.number().int().min(1).default(1024).describe(
    "Sessions whose derived model history (derive_messages) is cached, fed only by durable commits and reads " +
      "from the store; a session evicted from the cache is replayed from the store on its next request. An " +
      "agent's history also leaves the cache when the agent is evicted or disposed",
  ),
  usage_cache_sessions: z.number().int().min(1).default(10_000).describe(
    "Sessions whose usage rollup (tokens, cost, steps) is cached, a few numbers each, fed only by durable commits " +
      "and reads from the store: a cached session's usage costs the events since it was last asked for, an " +
      "evicted one's every usage event it holds",
  ),
}) as z.ZodType<SessionsConfig>;

/** Provides `sessions` over the mounted `session_store`. */
export const sessionsPlugin: Plugin<SessionsConfig> = definePlugin({
  name: "terret-sessions",
  description: "The append-only session log over the session_store seam (row `sessions.store`).",
  inject: [SessionStoreKey],
  provides: [SessionsKey],
  config: sessionsConfig,
  permissions: () => ({}),
  apply(ctx: Context, config: SessionsConfig): void {
    const log = new SessionLog(ctx, ctx.get(SessionStoreKey), {
      maxPayloadBytes: config.max_payload_bytes,
      streamBufferLimit: config.stream_buffer_limit,
      historyCacheSessions: config.history_cache_sessions,
      usageCacheSessions: config.usage_cache_sessions,
    });
    ctx.provide(SessionsKey, log);
  },
});
