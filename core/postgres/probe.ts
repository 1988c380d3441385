/**
 * A look at a PostgreSQL store without opening it: can it be reached, which schema version it holds, and how far the
 * database's clock is from this host's (what `trt doctor` reports).
 *
 * @module
 */
import postgres from "postgres";
import { quoted, redactUrl, SCHEMA_VERSION } from "./_schema.ts";

/** What {@linkcode probePostgresStore} found. */
export type PostgresProbe = {
  readonly reachable: false;
  /** The URL without its password. */
  readonly url: string;
  /** Why it could not be reached. */
  readonly error: string;
} | {
  readonly reachable: true;
  /** The URL without its password. */
  readonly url: string;
  /** The server's version string (`server_version`). */
  readonly server_version: string;
  /** The schema version stored (0: the schema is not created yet; the store creates it when it opens). */
  readonly schema_version: number;
  /** The version this code reads and writes. */
  readonly supported_version: number;
  /** The database clock minus this host's, in milliseconds (positive: the database is ahead). */
  readonly clock_skew_ms: number;
  /** The round trip the skew was measured over, in milliseconds (the skew is known to within half of it). */
  readonly round_trip_ms: number;
};

/** Connects once, reads the schema version and measures the clock skew; never creates or migrates anything. */
export async function probePostgresStore(
  url: string,
  options: { readonly schema?: string; readonly connectTimeoutSeconds?: number } = {},
): Promise<PostgresProbe> {
  const shown = redactUrl(url);
  const schema = options.schema ?? "terret";
  const sql = postgres(url, {
    max: 1,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    onnotice: () => {},
    connection: { application_name: "terret doctor" },
  });
  try {
    await sql`SELECT 1`;
    const sent = Date.now();
    const [clock] = await sql`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`;
    const received = Date.now();
    const [{ server_version }] = await sql`SHOW server_version` as unknown as [
      { server_version: string },
    ];
    const [exists] = await sql`SELECT to_regclass(${`${quoted(schema)}.terret_schema`}) AS t`;
    const version = exists?.t === null ? 0 : Number(
      (await sql.unsafe(`SELECT version FROM ${quoted(schema)}.terret_schema`))[0]?.version ?? 0,
    );
    return {
      reachable: true,
      url: shown,
      server_version,
      schema_version: version,
      supported_version: SCHEMA_VERSION,
      clock_skew_ms: Math.round(Number(clock!.ms) - (sent + received) / 2),
      round_trip_ms: received - sent,
    };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : String(error);
    return {
      reachable: false,
      url: shown,
      error: typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message,
    };
  } finally {
    await sql.end({ timeout: 0 }).catch(() => {});
  }
}
