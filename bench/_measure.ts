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
