/**
 * A seeded pseudo-random generator for property tests: the same seed gives the same cases on every run.
 *
 * @module
 */

/**
 * A deterministic generator of numbers in `[0, 1)` (mulberry32): the same `seed` yields the same sequence on every
 * run and machine, so a generated case that fails can be replayed. Not for anything secret.
 *
 * @example
 * ```ts
 * import { seededRandom } from "@terret/core/testing";
 * const next = seededRandom(7);
 * const again = seededRandom(7);
 * console.log(next() === again(), next() < 1); // true true
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
