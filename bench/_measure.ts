/**
 * Shared timing helpers for the benchmark scripts: paired rounds (every case once per round, the order rotated),
 * medians, and medians of per-round ratios. Never best-of-run: load from other processes moves both sides of a
 * round together, so the per-round ratio is the steady figure.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/**
 * One contender of a paired benchmark: `loop(n)` does the operation `n` times and is timed with `iterations` per
 * round. Each case owns its loop, so no call site is shared between cases (a shared one turns megamorphic and
 * taxes the cheapest cases most).
 */
export interface PairedCase {
  readonly name: string;
  readonly iterations: number;
  readonly loop: (iterations: number) => void;
}

/** Per-round timings of paired cases: nanoseconds per operation, one entry per round, by case name. */
export type PairedTimings = ReadonlyMap<string, readonly number[]>;

/**
 * Times every case once per round in one loop, the order rotated each round (so no case always runs first, or
 * right after the same neighbour), after a warm-up of a tenth of each case's iterations. Returns nanoseconds per
 * operation, one entry per round; compare cases with {@linkcode pairedRatio}, never best against best.
 */
export function pairedRounds(cases: readonly PairedCase[], rounds: number): PairedTimings {
  const timings = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (const c of cases) c.loop(Math.max(1, Math.floor(c.iterations / 10)));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!;
      const start = performance.now();
      c.loop(c.iterations);
      timings.get(c.name)!.push((performance.now() - start) * 1e6 / c.iterations);
    }
  }
  return timings;
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The median over rounds of `numerator`'s time divided by `denominator`'s time in the same round: how many times
 * slower `numerator` is (below 1: faster). Load from other processes moves both sides of a round together, so the
 * per-round ratio is far steadier than either side's best.
 */
export function pairedRatio(
  timings: PairedTimings,
  numerator: string,
  denominator: string,
): number {
  const a = timings.get(numerator)!;
  const b = timings.get(denominator)!;
  return median(a.map((value, round) => value / b[round]!));
}

/**
 * The flag every benchmark process runs with: the benchmarks' own lockfile (bench/deno.lock), so the packages only
 * they compare against (pi, openai, cordis) stay out of the root lockfile that `trt serve` installs from.
 */
export const BENCH_LOCK_FLAG: string = `--lock=${
  fileURLToPath(new URL("./deno.lock", import.meta.url))
}`;
