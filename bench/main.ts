// deno-lint-ignore-file no-console
/**
 * Runs every benchmark script under `bench/` in turn (pass `--quick` for short runs).
 *
 * Run: deno task bench [--quick]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { BENCH_LOCK_FLAG } from "./_measure.ts";

const dir = fileURLToPath(new URL("./", import.meta.url));
const scripts = [...Deno.readDirSync(dir)]
  .map((entry) => entry.name)
  .filter((name) => name.endsWith(".ts") && !name.startsWith("_") && name !== "main.ts")
  .sort();
for (const script of scripts) {
  console.log(`\n=== bench/${script}`);
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH_LOCK_FLAG, `${dir}${script}`, ...Deno.args],
  }).spawn().status;
  if (code !== 0) Deno.exit(code);
}
