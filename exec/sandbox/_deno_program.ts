/**
 * Recognises the argvs the `deno` provider can contain: a script file, `deno run [flags] <entry>`,
 * `deno eval <code>`, or an `npm:` specifier. Anything else is refused, and so is any flag that could widen the
 * permissions the provider derives.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { basename } from "node:path";

/** A program the `deno` provider accepts. */
export type DenoProgram =
  | {
    readonly kind: "file";
    readonly entry: string;
    readonly flags: string[];
    readonly args: string[];
  }
  | {
    readonly kind: "npm";
    readonly entry: string;
    readonly flags: string[];
    readonly args: string[];
  }
  | {
    readonly kind: "eval";
    readonly code: string;
    readonly flags: string[];
    readonly args: string[];
  };

const SCRIPT = /\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
/** Flags that change nothing the sandbox relies on. */
const SAFE_FLAGS = new Set(["-q", "--quiet", "--no-check", "--check", "--cached-only"]);
const SAFE_WITH_VALUE = ["--no-check=", "--check=", "--ext="];

/**
 * Parses `argv` into a {@linkcode DenoProgram}; `deno` (or the configured binary's path) names Deno itself.
 *
 * @throws {TerretError} `Denied` for a program that is not a Deno program, another subcommand, or a flag outside
 *   the safe set (every permission flag among them)
 */
export function parseDenoProgram(argv: readonly string[], denoPath: string): DenoProgram {
  const [program, ...rest] = argv as [string, ...string[]];
  const isDeno = program === denoPath || basename(program) === "deno";
  if (!isDeno) return direct(program, rest, [], argv);
  const [sub, ...tail] = rest;
  if (sub !== "run" && sub !== "eval") {
    throw denied(
      argv,
      `the deno sandbox runs "deno run" and "deno eval" only, not "deno ${sub ?? ""}"`.trimEnd(),
    );
  }
  const flags: string[] = [];
  let i = 0;
  for (; i < tail.length && tail[i]!.startsWith("-"); i++) {
    const flag = tail[i]!;
    if (!SAFE_FLAGS.has(flag) && !SAFE_WITH_VALUE.some((prefix) => flag.startsWith(prefix))) {
      throw denied(argv, `the deno sandbox derives the flags itself and refuses "${flag}"`);
    }
    flags.push(flag);
  }
  const [first, ...args] = tail.slice(i);
  if (first === undefined) {
    throw denied(argv, `"deno ${sub}" needs ${sub === "run" ? "an entry" : "code"}`);
  }
  if (sub === "eval") return { kind: "eval", code: first, flags, args };
  return direct(first, args, flags, argv);
}

function direct(
  entry: string,
  args: string[],
  flags: string[],
  argv: readonly string[],
): DenoProgram {
  if (entry.startsWith("npm:")) {
    if (!/^npm:[^\s]+$/.test(entry)) throw denied(argv, `"${entry}" is not an npm: specifier`);
    return { kind: "npm", entry, flags, args };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(entry) && !entry.startsWith("file:")) {
    throw denied(argv, `the deno sandbox runs local files and npm: packages, not "${entry}"`);
  }
  if (!SCRIPT.test(entry)) {
    throw denied(
      argv,
      "the deno sandbox runs Deno programs only (a .ts/.js file, deno eval, or an npm: specifier)",
    );
  }
  return { kind: "file", entry, flags, args };
}

function denied(argv: readonly string[], why: string): TerretError {
  return new TerretError("Denied", `Cannot run "${argv.join(" ")}": ${why}`, {
    details: { argv: [...argv] },
  });
}
