/**
 * The `terret-store-postgres` row: a {@linkcode PostgresSessionStore} as `session_store` (row `sessions.store`).
 *
 * @module
 */
import { type Context, definePlugin, type Plugin } from "@terret/hames";
import { z } from "zod";
import { TerretError } from "../errors.ts";
import { SessionStoreKey } from "../sessions/store.ts";
import { PostgresSessionStore } from "./postgres_store.ts";
import { PostgresAgentLeases } from "./agent_leases.ts";
import { AgentLeasesKey } from "../agents/agent_leases.ts";
import { SCHEMA_NAME } from "./_schema.ts";

/** The PostgreSQL store's config. */
export interface PostgresStoreConfig {
  /** The database URL (prefer `url_env`: a URL in a config file carries its password). */
  readonly url?: string | undefined;
  /** The environment variable holding the URL. */
  readonly url_env?: string | undefined;
  /** The schema the tables live in. */
  readonly schema: string;
  /** The most pooled connections. */
  readonly pool_size: number;
  /** Seconds to wait for a connection. */
  readonly connect_timeout_seconds: number;
  /** This process's id in the fleet (random when unset). */
  readonly node_id?: string | undefined;
  /** Seconds an agent's lease lasts unless renewed (how long a dead node's agents wait to be taken over). */
  readonly lease_ttl_seconds: number;
}

/** The PostgreSQL store's config schema: exactly one of `url` and `url_env`. */
export const postgresStoreConfig: z.ZodType<PostgresStoreConfig> = z.object({
  url: z.string().min(1).optional().describe(
    "Database URL, postgres://user:password@host:port/db (prefer url_env, so the password stays out of config files)",
  ),
  url_env: z.string().min(1).optional().describe(
    "Environment variable holding the database URL (read when the row mounts)",
  ),
  schema: z.string().regex(SCHEMA_NAME).default("terret").describe(
    "Schema holding the store's tables (created and migrated when the row mounts; a schema newer than this Terret is refused)",
  ),
  pool_size: z.number().int().min(1).max(100).default(4).describe(
    "Pooled connections for reads and the group commit (one more listens for other nodes' commits)",
  ),
  connect_timeout_seconds: z.number().int().min(1).default(10).describe(
    "Seconds to wait for a connection before an operation fails",
  ),
  node_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/).optional().describe(
    "This process's id in the fleet, printed by trt serve and shown as its connections' application_name " +
      "(default: node- and 8 random hex digits, new at each start)",
  ),
  lease_ttl_seconds: z.number().min(0.1).max(3600).default(15).describe(
    "Seconds an agent's lease lasts unless renewed (renewed every quarter of it while a turn runs): after a node " +
      "dies, another node takes its agents over once it has passed",
  ),
}).strict().refine((config) => (config.url === undefined) !== (config.url_env === undefined), {
  message: "give exactly one of url and url_env",
}) as unknown as z.ZodType<PostgresStoreConfig>;

/**
 * The URL a config names: `url`, or the value of the `url_env` variable (read through `env`, the process's
 * environment by default).
 *
 * @throws {TerretError} `StoreFailed` when `url_env` names an unset variable
 */
export function postgresStoreUrl(
  config: Pick<PostgresStoreConfig, "url" | "url_env">,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): string {
  if (config.url !== undefined) return config.url;
  const name = config.url_env!;
  const url = env(name);
  if (url === undefined || url === "") {
    throw new TerretError(
      "StoreFailed",
      `Cannot open the PostgreSQL session store: environment variable "${name}" (url_env) is not set`,
    );
  }
  return url;
}

/**
 * The environment postgres.js consults (libpq's `PG*` conventions, for whatever the URL leaves out, and the OS user
 * name as the default user): granted so a scoped host can open the store.
 */
const DRIVER_ENV: readonly string[] = [
  "PGHOST",
  "PGPORT",
  "PGUSER",
  "PGUSERNAME",
  "PGDATABASE",
  "PGPASSWORD",
  "PGAPPNAME",
  "PGTARGETSESSIONATTRS",
  "PGMAX",
  "PGSSL",
  "PGSSLNEGOTIATION",
  "PGIDLE_TIMEOUT",
  "PGCONNECT_TIMEOUT",
  "PGMAX_LIFETIME",
  "PGMAX_PIPELINE",
  "PGBACKOFF",
  "PGKEEP_ALIVE",
  "PGPREPARE",
  "PGDEBUG",
  "PGFETCH_TYPES",
  "PGPUBLICATIONS",
  "PGTARGET_SESSION_ATTRS",
  "USERNAME",
  "USER",
  "LOGNAME",
];

/** The `host:port` a URL connects to (for `--allow-net`), or undefined when it cannot be parsed. */
function netOf(url: string | undefined): string[] | true {
  if (url === undefined) return true;
  try {
    const parsed = new URL(url);
    return [`${parsed.hostname}:${parsed.port || "5432"}`];
  } catch {
    return true;
  }
}

/**
 * Mounts a {@linkcode PostgresSessionStore} as `session_store` (config row `sessions.store`): the store a fleet of
 * `trt serve` processes shares. Host permissions: `net` to the database (any host when the URL comes from the
 * environment), `env` of `url_env` and of the driver's `PG*` variables.
 */
export const postgresStorePlugin: Plugin<PostgresStoreConfig> = definePlugin({
  name: "terret-store-postgres",
  description:
    "Session store in PostgreSQL (postgres.js, group commit, LISTEN/NOTIFY live tails): the fleet's shared store.",
  provides: [SessionStoreKey, AgentLeasesKey],
  config: postgresStoreConfig,
  permissions: (config) => ({
    net: netOf(config.url),
    env: config.url_env === undefined ? DRIVER_ENV : [config.url_env, ...DRIVER_ENV],
  }),
  async apply(ctx: Context, config: PostgresStoreConfig): Promise<void> {
    const store = await PostgresSessionStore.open({
      url: postgresStoreUrl(config),
      schema: config.schema,
      poolSize: config.pool_size,
      connectTimeoutSeconds: config.connect_timeout_seconds,
      ...(config.node_id === undefined ? {} : { node: config.node_id }),
      // A node paused in the middle of a group commit holds its agents' lease rows: released after one ttl.
      idleInTransactionMs: Math.round(config.lease_ttl_seconds * 1000),
      logger: ctx.logger,
    });
    ctx.effect(() => () => store.close(), "close postgres store");
    ctx.provide(SessionStoreKey, store);
    ctx.provide(
      AgentLeasesKey,
      new PostgresAgentLeases(store, Math.round(config.lease_ttl_seconds * 1000)),
    );
  },
});
