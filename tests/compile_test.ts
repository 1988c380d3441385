// deno-lint-ignore-file no-console
/**
 * `deno task compile` builds a `trt` that runs: it resolves the shipped headless profile from its embedded bundles
 * (no file outside the binary read) and boots it. Compiling needs the `denort` runtime, which these machines cannot
 * download: the build test runs where `DENORT_BIN` is set (or `TERRET_COMPILE_NETWORK=1` says dl.deno.land is
 * reachable) and is SKIPPED loudly otherwise. It is not a service lane: CI does not fail for it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { COMPILE_INCLUDES, compileArgs } from "../tools/compile.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function compileSkipReason(): string | undefined {
  if (Deno.env.get("DENORT_BIN") !== undefined) return undefined;
  if (Deno.env.get("TERRET_COMPILE_NETWORK") === "1") return undefined;
  const reason =
    "deno compile needs the denort runtime: set DENORT_BIN to a denort binary of this Deno version " +
    "(or TERRET_COMPILE_NETWORK=1 where dl.deno.land is reachable)";
  console.warn(`\n!!! COMPILED TRT TEST SKIPPED: ${reason}\n`);
  return reason;
}

Deno.test("compileArgs() includes the runtime files and bakes the profile's flags, widening only --allow-ffi", () => {
  assert.deepStrictEqual(
    compileArgs(
      [
        "--allow-read",
        "--allow-net=127.0.0.1:7878,openrouter.ai",
        "--allow-ffi=/root/.cache/deno/npm/registry.npmjs.org/@lydell",
        "--ignore-env=LOG_STREAM",
      ],
      "dist/trt",
    ),
    [
      "compile",
      "--output",
      "dist/trt",
      "--include",
      "exec/sandbox/make_image.sh",
      "--allow-read",
      "--allow-net=127.0.0.1:7878,openrouter.ai",
      "--allow-ffi",
      "--ignore-env=LOG_STREAM",
      "interfaces/cli/main.ts",
    ],
  );
  for (const file of COMPILE_INCLUDES) {
    assert.equal(Deno.statSync(join(ROOT, file)).isFile, true, file);
  }
});

const skip = compileSkipReason();

Deno.test({
  name:
    "deno task compile builds a trt that boots the shipped headless profile from its embedded bundles",
  ignore: skip !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-compile-" });
    try {
      const output = join(dir, "trt");
      const built = await new Deno.Command(Deno.execPath(), {
        args: ["task", "compile", "--output", output],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
      // Run from an empty directory, far from the checkout: only the binary's own graph is there.
      const work = join(dir, "work");
      await Deno.mkdir(work);
      const ran = await new Deno.Command(output, {
        args: ["dump-config", "--home", join(dir, "home")],
        cwd: work,
        env: { HOME: dir, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(ran.stdout);
      assert.equal(ran.code, 0, new TextDecoder().decode(ran.stderr));
      assert.match(stdout, /profile "headless"/);
      assert.match(stdout, /id: interfaces\.ws/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
