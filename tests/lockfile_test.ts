/**
 * First start: `deno task serve` installs the root lockfile's whole npm snapshot, so the packages only the benchmarks
 * compare against (pi, openai, cordis — recorded in bench/deno.lock instead) must stay out of the root lockfile.
 */
import assert from "node:assert/strict";

/** Packages (and scopes) that only `bench/` imports. */
const BENCH_ONLY = ["cordis", "openai", "@earendil-works/"];

async function npmNames(path: URL): Promise<string[]> {
  const lock = JSON.parse(await Deno.readTextFile(path)) as { npm?: Record<string, unknown> };
  // Keys look like `name@version` or `@scope/name@version`, with peer suffixes after `_`.
  return Object.keys(lock.npm ?? {}).map((key) => key.slice(0, key.indexOf("@", 1)));
}

const benchOnly = (name: string): boolean =>
  BENCH_ONLY.some((entry) => entry.endsWith("/") ? name.startsWith(entry) : name === entry);

Deno.test("the root lockfile that serve installs from holds none of the benchmarks' comparison packages", async () => {
  const root = await npmNames(new URL("../deno.lock", import.meta.url));
  assert.deepStrictEqual(root.filter(benchOnly), []);
  // They are pinned in the benchmarks' own lockfile instead.
  const bench = await npmNames(new URL("../bench/deno.lock", import.meta.url));
  assert.deepStrictEqual(
    [...new Set(bench.filter(benchOnly).map((name) => name.split("/")[0]!))].sort(),
    ["@earendil-works", "cordis", "openai"],
  );
});
