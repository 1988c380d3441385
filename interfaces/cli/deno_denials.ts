/**
 * Reads Deno's permission denials out of a program's output: the `NotCapable: Requires <kind> access to "<what>"`
 * lines a program run with `--no-prompt` prints (or an MCP server returns as a tool error) when it reaches past its
 * `--allow-*` flags.
 *
 * @module
 */

/** One permission a program was denied. */
export interface DenoDenial {
  /** The permission kind (`read`, `write`, `net`, `env`, `run`, `ffi`, `sys`, `import`). */
  readonly kind: string;
  /** What it reached for (a path, `host:port`, a variable name, a program), as Deno names it. */
  readonly target: string;
}

const DENIAL =
  /Requires (read|write|net|env|run|ffi|sys|import) access to (?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;

/**
 * The distinct denials in `text`, in the order they first appear. A line that is not a denial contributes none;
 * escape sequences (colour) are ignored.
 */
export function parseDenoDenials(text: string): DenoDenial[] {
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  const found: DenoDenial[] = [];
  const seen = new Set<string>();
  for (const match of plain.matchAll(DENIAL)) {
    const denial = { kind: match[1]!, target: match[2] ?? match[3]! };
    const key = `${denial.kind}\0${denial.target}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(denial);
  }
  return found;
}
