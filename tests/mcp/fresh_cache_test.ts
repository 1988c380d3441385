/**
 * The stdio MCP tests under a custom Deno cache: a child `deno test` of `everything_stdio_test.ts`,
 * `filesystem_test.ts` (the `none` and the `deno` sandbox) and `confinement_test.ts` (rows' own sandboxes) runs with
 * `DENO_DIR` at a temporary directory and `HOME` at a temporary home whose default cache location is unusable.
 * The servers it spawns through the subprocess seam find their packages only if `DENO_DIR` reaches them (the
 * stdio row's default `inherit_env`); before it did, every server failed to start.
 *
 * The temporary cache is seeded with a link to this Deno's npm cache (no network, no wait); the rest of it
 * (compiled modules, registry metadata) starts empty.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { DENO } from "./_world.ts";

/** The stdio servers on the `none` sandbox, server-filesystem under the `deno` sandbox, and rows' own sandboxes. */
const TEST_FILES = [
  "./everything_stdio_test.ts",
  "./filesystem_test.ts",
  "./confinement_test.ts",
].map((file) => fileURLToPath(new URL(file, import.meta.url)));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** This Deno's npm cache directory, from `deno info --json`. */
async function npmCache(): Promise<string> {
  const output = await new Deno.Command(DENO, {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.success, true, new TextDecoder().decode(output.stderr));
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as { npmCache?: unknown };
  assert.equal(typeof info.npmCache, "string");
  return info.npmCache as string;
}

Deno.test("the stdio MCP tests pass under a custom DENO_DIR and a HOME without a usable cache", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-deno-dir-" }));
  try {
    await Deno.mkdir(`${dir}/deno`);
    await Deno.symlink(await npmCache(), `${dir}/deno/npm`);
    // `$HOME/.cache` is a file: a child that does not get DENO_DIR cannot fall back to the default cache.
    await Deno.mkdir(`${dir}/home`);
    await Deno.writeTextFile(`${dir}/home/.cache`, "not a directory\n");
    const output = await new Deno.Command(DENO, {
      args: ["test", "-A", "--no-check", ...TEST_FILES],
      cwd: ROOT,
      env: {
        DENO_DIR: `${dir}/deno`,
        HOME: `${dir}/home`,
        XDG_CACHE_HOME: `${dir}/home/.cache`,
        NO_COLOR: "1",
        DENO_NO_UPDATE_CHECK: "1",
      },
      stdout: "piped",
      stderr: "piped",
      // A deadline for a wedged child, not a timing claim.
      signal: AbortSignal.timeout(240_000),
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    const summary = /^(ok|FAILED) \| (\d+) passed \| (\d+) failed/m.exec(text);
    assert.deepStrictEqual(
      [output.code, summary?.slice(1)],
      [0, ["ok", "13", "0"]],
      text.slice(-4000),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
