/**
 * Checks every sandbox provider applies before building an argv: a well-formed argv and environment, and a working
 * directory that really is inside a granted workspace.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { isAbsolute } from "node:path";
import { containPath } from "../containment.ts";

/**
 * Throws unless `argv` is a non-empty array of strings without NUL bytes.
 *
 * @throws {TypeError}
 */
export function checkArgv(argv: readonly string[]): void {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new TypeError("Cannot wrap an empty argv");
  }
  for (const arg of argv) {
    if (typeof arg !== "string") throw new TypeError("Cannot wrap an argv holding a non-string");
    if (arg.includes("\0")) {
      throw new TypeError(`Cannot wrap "${argv[0]}": an argument holds a NUL byte`);
    }
  }
  if (argv[0] === "") throw new TypeError("Cannot wrap an argv whose program is empty");
}

/**
 * Copies `env` after checking it: names non-empty without `=` or NUL, values strings without NUL.
 *
 * @throws {TypeError}
 */
export function checkEnv(
  env: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env ?? {})) {
    if (name === "" || name.includes("=") || name.includes("\0")) {
      throw new TypeError(`Cannot pass environment variable "${name}": invalid name`);
    }
    if (typeof value !== "string" || value.includes("\0")) {
      throw new TypeError(
        `Cannot pass environment variable "${name}": the value must be a string without NUL`,
      );
    }
    out[name] = value;
  }
  return out;
}

/**
 * Resolves `cwd` through its real location and requires it to be an existing directory inside a granted workspace.
 *
 * @returns the real working directory (what the program must be started in)
 * @throws {TerretError} `Denied` outside the workspaces (a link leading out included), `NotFound` when it does not
 *   exist or is not a directory
 * @throws {TypeError} when `cwd` is not absolute
 */
export async function containedCwd(
  cwd: string,
  dirs: readonly string[],
  maxHops?: number,
): Promise<string> {
  if (typeof cwd !== "string" || !isAbsolute(cwd)) {
    throw new TypeError(`Cannot run in "${cwd}": the cwd must be an absolute path`);
  }
  const real = await containPath(cwd, dirs, {
    action: "run in",
    ...(maxHops === undefined ? {} : { maxHops }),
  });
  let info: Deno.FileInfo | undefined;
  try {
    info = await Deno.stat(real);
  } catch {
    info = undefined;
  }
  if (info === undefined || !info.isDirectory) {
    throw new TerretError("NotFound", `Cannot run in "${cwd}": no such directory`, {
      details: { cwd, real },
    });
  }
  return real;
}
