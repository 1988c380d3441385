/**
 * Loopback ports for tests that cannot listen on port 0 themselves: a port picked now and bound later (by a child
 * process, or by a server started again on the same port), or one that must stay silent.
 *
 * @module
 */

/** The lowest port of a stable range: well above the well-known and registered ports test machines tend to use. */
const STABLE_FLOOR = 10_000;

/**
 * A free loopback TCP port below the kernel's ephemeral range. A port bound and released (`port: 0`) can be taken
 * before it is bound again by any socket of a test running in parallel (the kernel hands out ephemeral ports to
 * `port: 0` listeners and to outgoing connections, loopback ones included); a port below the range is never handed
 * out, so only an explicit bind of the same number could take it, and the number is drawn at random.
 *
 * @throws {Error} when the ephemeral range leaves no stable range below it, or no port there is free
 */
export function stablePort(): number {
  const low = ephemeralLow();
  if (low - STABLE_FLOOR < 1000) {
    throw new Error(
      `Cannot pick a stable port: the ephemeral range starts at ${low}, too close to ${STABLE_FLOOR}`,
    );
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = STABLE_FLOOR + Math.floor(Math.random() * (low - STABLE_FLOOR));
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    }
  }
  throw new Error(
    `Cannot pick a stable port: 100 ports between ${STABLE_FLOOR} and ${low} were taken`,
  );
}

/** The first port of the kernel's ephemeral range (Linux's default where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(
      Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/)[0],
    );
    if (Number.isSafeInteger(low) && low > 0 && low < 65536) return low;
  } catch {
    // Not Linux, or /proc is not readable: the default below.
  }
  return 32768;
}
