/**
 * Shared timing helpers for the benchmark scripts.
 *
 * @module
 */

/** One measured row. */
export interface Measurement {
  readonly name: string;
  readonly perSecond: number;
}

/**
 * Runs `fn` `iterations` times after a warm-up of a tenth as many, three rounds, and reports the best round's
 * operations per second (the least disturbed by GC and the other core).
 */
export function measure(name: string, iterations: number, fn: () => void): Measurement {
  const warm = Math.max(1, Math.floor(iterations / 10));
  for (let i = 0; i < warm; i++) fn();
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) fn();
    const elapsed = (performance.now() - start) / 1000;
    best = Math.max(best, iterations / elapsed);
  }
  return { name, perSecond: best };
}

/** Formats measurements as an aligned table of operations per second. */
export function formatTable(rows: readonly Measurement[]): string {
  const width = Math.max(...rows.map((row) => row.name.length));
  return rows
    .map((row) =>
      `${row.name.padEnd(width)}  ${
        Math.round(row.perSecond).toLocaleString("en-US").padStart(14)
      } /s`
    )
    .join("\n");
}

/** One measured latency row. */
export interface Latency {
  readonly name: string;
  /** Median milliseconds per run. */
  readonly medianMs: number;
  /** 90th percentile milliseconds per run. */
  readonly p90Ms: number;
}

/** Runs the async `fn` `runs` times after two warm-up runs and reports the median and p90 latency. */
export async function measureLatency(
  name: string,
  runs: number,
  fn: () => Promise<unknown>,
): Promise<Latency> {
  for (let i = 0; i < 2; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { name, medianMs: at(0.5), p90Ms: at(0.9) };
}
