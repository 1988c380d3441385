/**
 * `@terret/core/postgres`: the PostgreSQL session store, the fleet's shared store (`terret-store-postgres`). A
 * subpath of its own so that `@terret/core` alone never fetches the PostgreSQL driver.
 *
 * @module
 */
export { PostgresSessionStore, type PostgresStoreOptions } from "./postgres_store.ts";
export {
  type PostgresStoreConfig,
  postgresStoreConfig,
  postgresStorePlugin,
  postgresStoreUrl,
} from "./postgres_store_plugin.ts";
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from "./_schema.ts";
export { type PostgresProbe, probePostgresStore } from "./probe.ts";
export { type Lease, PostgresLeases } from "./leases.ts";
export { PostgresAgentLeases } from "./agent_leases.ts";
