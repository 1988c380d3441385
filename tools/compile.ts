// deno-lint-ignore-file no-console
/**
 * Builds `trt` as one executable with `deno compile`: the CLI entry, the files it reads at run time
 * (`--include`), and the permission flags of the profile it will serve (what `trt permissions` prints for it)
 * baked in instead of `-A`.
 *
 * - The shipped bundles and profile templates need no `--include`: they are embedded as a module
 *   (composition/_shipped_bundles_data.ts).
 * - `--include exec/sandbox/make_image.sh`: `trt sandbox build` feeds it to bash.
 * - Permissions: `trt permissions --profile P [--patch F …]` (so patch the listen address, the model URL or
 *   `!env` names at build time and the flags follow), with one widening: `--allow-ffi` is unscoped because the
 *   terminal's native addon is extracted from the binary to a path known only at run time.
 *
 * `deno compile` needs the `denort` runtime: set `DENORT_BIN` to a local copy where dl.deno.land cannot be reached.
 *
 * Run: deno task compile [--output dist/trt] [--target T] [--profile headless] [--patch prod.yml …]
 *
 * @module
 */
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

/** The files a compiled `trt` reads at run time, relative to the repository root. */
export const COMPILE_INCLUDES: readonly string[] = ["exec/sandbox/make_image.sh"];

/** The arguments of `deno compile` for `trt`, given the permission flags and the output path. */
export function compileArgs(
  permissions: readonly string[],
  output: string,
  target?: string,
): string[] {
  const flags = permissions.map((flag) => (flag.startsWith("--allow-ffi=") ? "--allow-ffi" : flag));
  return [
    "compile",
    "--output",
    output,
    ...(target === undefined ? [] : ["--target", target]),
    ...COMPILE_INCLUDES.flatMap((file) => ["--include", file]),
    ...flags,
    "interfaces/cli/main.ts",
  ];
}

/** The permission flags `trt permissions` prints for the profile and patches in `args`. */
export async function permissionFlags(args: readonly string[]): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "interfaces/cli/main.ts", "permissions", ...args],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (output.code !== 0) {
    throw new Error(
      `Cannot compute the permission flags: trt permissions exited ${output.code}: ${
        new TextDecoder().decode(output.stderr).trim()
      }`,
    );
  }
  return new TextDecoder().decode(output.stdout).split("\n").filter((line) => line !== "");
}

if (import.meta.main) {
  const args = [...Deno.args];
  const take = (flag: string): string | undefined => {
    const at = args.indexOf(flag);
    if (at < 0) return undefined;
    const [, value] = args.splice(at, 2);
    return value;
  };
  const output = take("--output") ?? "dist/trt";
  const target = take("--target");
  const flags = await permissionFlags(args);
  const compile = compileArgs(flags, output, target);
  console.log(`deno ${compile.join(" ")}`);
  const { code } = await new Deno.Command(Deno.execPath(), { args: compile, cwd: root }).spawn()
    .status;
  if (code !== 0) {
    console.error(
      `deno compile failed (exit ${code})` +
        (Deno.env.get("DENORT_BIN") === undefined
          ? ": where dl.deno.land cannot be reached, set DENORT_BIN to a denort binary of this Deno version"
          : ""),
    );
    Deno.exit(code);
  }
  console.log(`built ${output}`);
}
