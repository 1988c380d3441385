/**
 * The `sessions.store` row for the SQLite store: its config, where the config puts the file, and the plugin that
 * mounts a {@linkcode SqliteSessionStore}.
 *
 * @module
 */
import { type Context, definePlugin, type Plugin } from "@terret/hames";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import { SqliteSessionStore } from "./sqlite_store.ts";
import { SessionStoreKey } from "./store.ts";

/** The SQLite store's config. */
export interface SqliteStoreConfig {
  /** The database file (relative to `dir` when given, else to the working directory). */
  readonly path: string;
  /** The directory a relative `path` is resolved against (the base bundle passes the Terret home). */
  readonly dir?: string | undefined;
  /** The `synchronous` pragma. */
  readonly synchronous: "normal" | "full";
  /** The most session heads cached at once (least recently used dropped first). */
  readonly head_cache_sessions: number;
}

/** The SQLite store's config schema. */
export const sqliteStoreConfig: z.ZodType<SqliteStoreConfig> = z.object({
  path: z.string().min(1).describe(
    "Database file (created with its directory when missing; -wal and -shm files sit beside it), relative to " +
      "dir when given. The host needs --allow-read and --allow-write for this file's directory; `trt " +
      "permissions` derives them from it.",
  ),
  dir: z.string().min(1).optional().describe(
    "The directory a relative path is resolved against (default: the working directory); the base bundle " +
      "passes the Terret home (!setting terret.home)",
  ),
  synchronous: z.enum(["normal", "full"]).default("normal").describe(
    "normal: a commit survives a crash, the latest may roll back on power loss; full: fsync every commit",
  ),
  head_cache_sessions: z.number().int().min(1).default(4096).describe(
    "The most session heads (last seq) cached in memory, least recently used dropped first; a dropped one is " +
      "read from the database on its next use, so a store of many sessions keeps a bounded cache",
  ),
}) as z.ZodType<SqliteStoreConfig>;

/** The database file a config names: `path`, resolved against `dir` when it is relative and `dir` is given. */
export function sqliteStorePath(config: Pick<SqliteStoreConfig, "path" | "dir">): string {
  if (config.path === ":memory:" || config.dir === undefined || isAbsolute(config.path)) {
    return config.path;
  }
  return join(config.dir, config.path);
}

/**
 * Mounts a {@linkcode SqliteSessionStore} as `session_store` (config row `sessions.store`). Host permissions: `read`
 * and `write` of the database file's directory (the file, its `-wal` and `-shm` siblings); none for `:memory:`.
 */
export const sqliteStorePlugin: Plugin<SqliteStoreConfig> = definePlugin({
  name: "terret-store-sqlite",
  description:
    "Session store in one SQLite file (node:sqlite, WAL, group commit): the embedded default.",
  provides: [SessionStoreKey],
  config: sqliteStoreConfig,
  permissions: (config) => {
    const path = sqliteStorePath(config);
    if (path === ":memory:") return {};
    return { read: [dirname(path)], write: [dirname(path)] };
  },
  apply(ctx: Context, config: SqliteStoreConfig): void {
    const store = SqliteSessionStore.open({
      path: sqliteStorePath(config),
      synchronous: config.synchronous,
      headCacheSessions: config.head_cache_sessions,
      logger: ctx.logger,
    });
    ctx.effect(() => () => store.close(), "close sqlite store");
    ctx.provide(SessionStoreKey, store);
  },
});
