/**
 * Argument parsing for `trt` verbs: long flags only (`--flag value` or `--flag=value`, `-h` for help), a fixed set
 * per verb, and a clear usage error (exit 2) for anything else.
 *
 * @module
 */

/** One flag a verb accepts. */
export interface FlagSpec {
  /** The flag without dashes (`profile`). */
  readonly name: string;
  /** `boolean` flags take no value; `string` takes one; `list` may repeat. */
  readonly kind: "boolean" | "string" | "list";
  /** The value's placeholder in help (`NAME`). */
  readonly value?: string;
  /** One line for `--help`. */
  readonly help: string;
}

/** Parsed flags: booleans, strings and lists by flag name. */
export interface ParsedArgs {
  /** Boolean flags that were given. */
  readonly booleans: ReadonlySet<string>;
  /** String flags (the last occurrence wins). */
  readonly strings: ReadonlyMap<string, string>;
  /** List flags, in order. */
  readonly lists: ReadonlyMap<string, readonly string[]>;
  /** True when `--help`/`-h` was given. */
  readonly help: boolean;
}

/** A command-line mistake: printed with the verb's usage hint, exit code 2. */
export class UsageError extends Error {
  /**
   * @param message sentence case, no trailing period
   */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Parses `args` against `specs`.
 *
 * @throws {UsageError} for an unknown flag, a missing value, a value on a boolean flag, or a positional argument
 */
export function parseArgs(
  verb: string,
  args: readonly string[],
  specs: readonly FlagSpec[],
): ParsedArgs {
  const booleans = new Set<string>();
  const strings = new Map<string, string>();
  const lists = new Map<string, string[]>();
  let help = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === "--help" || arg === "-h") {
      help = true;
      continue;
    }
    if (!arg.startsWith("--")) {
      throw new UsageError(`trt ${verb}: unexpected argument "${arg}"`);
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = specs.find((candidate) => candidate.name === name);
    if (spec === undefined) throw new UsageError(`trt ${verb}: unknown flag "--${name}"`);
    if (spec.kind === "boolean") {
      if (eq >= 0) throw new UsageError(`trt ${verb}: flag "--${name}" takes no value`);
      booleans.add(name);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = args[index + 1];
      index++;
    }
    if (value === undefined || value === "" || (eq < 0 && value.startsWith("--"))) {
      throw new UsageError(
        `trt ${verb}: flag "--${name}" needs a value (${spec.value ?? "VALUE"})`,
      );
    }
    if (spec.kind === "string") strings.set(name, value);
    else lists.set(name, [...(lists.get(name) ?? []), value]);
  }
  return { booleans, strings, lists, help };
}

/** Renders a verb's help: its synopsis, description and flags. */
export function renderHelp(
  verb: string,
  summary: string,
  details: readonly string[],
  specs: readonly FlagSpec[],
): string {
  const flags = specs.map((spec) => {
    const left = `--${spec.name}${spec.value === undefined ? "" : ` ${spec.value}`}`;
    return `  ${left.padEnd(26)}${spec.help}`;
  });
  return [
    `Usage: trt ${verb} [flags]`,
    "",
    summary,
    ...(details.length > 0 ? ["", ...details] : []),
    "",
    "Flags:",
    ...flags,
    `  ${"--help, -h".padEnd(26)}show this help`,
    "",
  ].join("\n");
}
