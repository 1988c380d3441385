/**
 * The fleet store's doctor check: whether each PostgreSQL session store row can reach its database, which schema
 * version the database holds, and how far the database's clock is from this host's.
 *
 * @module
 */
import {
  type PostgresStoreConfig,
  postgresStorePlugin,
  postgresStoreUrl,
  probePostgresStore,
} from "@terret/core/postgres";
import type { DoctorCheck, DoctorFinding } from "@terret/terret";

/** The clock skew between a node and the database beyond which the check warns, in milliseconds. */
export const CLOCK_SKEW_BOUND_MS = 1000;

/**
 * The `postgres` check (`atServe`): for each enabled `terret-store-postgres` row, an `error` when the database
 * cannot be reached (naming the URL without its password) or holds a schema newer than this Terret, a `warning`
 * when the clock skew is over {@linkcode CLOCK_SKEW_BOUND_MS}, and `ok` lines for the connection, the schema
 * version and the skew otherwise.
 */
export const postgresCheck: DoctorCheck = {
  name: "postgres",
  description: "each PostgreSQL store row's connection, schema version and clock skew",
  atServe: true,
  async run(input) {
    const findings: DoctorFinding[] = [];
    for (const row of input.prepared) {
      if (row.plugin !== postgresStorePlugin) continue;
      const id = row.composed.id;
      const config = row.parsed as PostgresStoreConfig;
      const finding = (level: DoctorFinding["level"], message: string): void =>
        void findings.push({ level, check: "postgres", row: id, message });
      let url: string;
      try {
        url = postgresStoreUrl(config, (name) => input.env.get(name));
      } catch (error) {
        finding("error", `row "${id}": ${(error as Error).message}`);
        continue;
      }
      const probe = await probePostgresStore(url, {
        schema: config.schema,
        connectTimeoutSeconds: config.connect_timeout_seconds,
      });
      if (!probe.reachable) {
        finding("error", `row "${id}" cannot reach "${probe.url}": ${probe.error}`);
        continue;
      }
      finding("ok", `row "${id}" reaches "${probe.url}" (PostgreSQL ${probe.server_version})`);
      if (probe.schema_version > probe.supported_version) {
        finding(
          "error",
          `row "${id}": schema "${config.schema}" is version ${probe.schema_version}, newer than this Terret's ` +
            `${probe.supported_version}: upgrade Terret on this node`,
        );
      } else {
        finding(
          "ok",
          probe.schema_version === probe.supported_version
            ? `row "${id}": schema "${config.schema}" is at version ${probe.schema_version}`
            : `row "${id}": schema "${config.schema}" is at version ${probe.schema_version}; the store ` +
              `migrates it to ${probe.supported_version} when it opens`,
        );
      }
      const skew = `${probe.clock_skew_ms} ms (±${Math.ceil(probe.round_trip_ms / 2)} ms)`;
      finding(
        Math.abs(probe.clock_skew_ms) > CLOCK_SKEW_BOUND_MS ? "warning" : "ok",
        Math.abs(probe.clock_skew_ms) > CLOCK_SKEW_BOUND_MS
          ? `row "${id}": the database clock is ${skew} from this host's, over the ${CLOCK_SKEW_BOUND_MS} ms ` +
            "bound the fleet assumes: synchronise the clocks (NTP)"
          : `row "${id}": clock skew ${skew}, within ${CLOCK_SKEW_BOUND_MS} ms`,
      );
    }
    return findings;
  },
};
