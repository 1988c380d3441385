/**
 * The `terret-store-jsonl` row: its config and the plugin that mounts a {@linkcode JsonlSessionStore} as the
 * session store.
 *
 * @module
 */
import { type Context, definePlugin, type Plugin } from "@terret/hames";
import { z } from "zod";
import { JsonlSessionStore } from "./jsonl_store.ts";
import { SessionStoreKey } from "./store.ts";

/** The JSONL store's config. */
export interface JsonlStoreConfig {
  /** The store directory. */
  readonly dir: string;
  /** Whether to fdatasync after each group. */
  readonly fsync: boolean;
}

/** The JSONL store's config schema. */
export const jsonlStoreConfig: z.ZodType<JsonlStoreConfig> = z.object({
  dir: z.string().min(1).describe(
    "Directory of <session_id>.jsonl files (created when missing). The host needs --allow-read and " +
      "--allow-write for exactly this path; `trt permissions` derives them from it.",
  ),
  fsync: z.boolean().default(false).describe(
    "fdatasync each file after each group commit: survives power loss, not only a crash (slower)",
  ),
}) as z.ZodType<JsonlStoreConfig>;

/** Mounts a {@linkcode JsonlSessionStore} as `session_store` (config row `sessions.store`). */
export const jsonlStorePlugin: Plugin<JsonlStoreConfig> = definePlugin({
  name: "terret-store-jsonl",
  description:
    "Session store as one greppable JSONL file per session; one process per directory (locked).",
  provides: [SessionStoreKey],
  config: jsonlStoreConfig,
  permissions: (config) => ({ read: [config.dir], write: [config.dir] }),
  apply(ctx: Context, config: JsonlStoreConfig): void {
    const store = JsonlSessionStore.open({
      dir: config.dir,
      fsync: config.fsync,
      logger: ctx.logger,
    });
    ctx.effect(() => () => store.close(), "close jsonl store");
    ctx.provide(SessionStoreKey, store);
  },
});
