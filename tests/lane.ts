// deno-lint-ignore-file no-console
/**
 * The rule every optional test lane follows when its service is missing (a Docker engine, ripgrep, bubblewrap,
 * PostgreSQL, chromium): locally it says loudly that it is SKIPPED; in CI (`.ci/run` sets
 * `TERRET_REQUIRE_LANES=1`) it fails, so a lane that cannot start never passes silently.
 *
 * @module
 */

/** Whether every lane must run (CI). */
export function lanesRequired(): boolean {
  return Deno.env.get("TERRET_REQUIRE_LANES") === "1";
}

/**
 * Reports that lane `name` cannot run because of `reason`: throws when lanes are required, otherwise warns loudly
 * and returns the reason (pass it to a test's `ignore`).
 */
export function skipLane(name: string, reason: string): string {
  if (lanesRequired()) {
    throw new Error(`the ${name} lane cannot run in CI (TERRET_REQUIRE_LANES=1): ${reason}`);
  }
  console.warn(`\n!!! ${name.toUpperCase()} LANE SKIPPED: ${reason}\n`);
  return reason;
}
