/**
 * The session rule an answer with `remember` adds, derived from the parked call.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { readBashCommand } from "./bash_command.ts";
import { parseRule } from "./permission_rule.ts";

const PLAIN_WORD = /^[A-Za-z0-9_.\/+@%^,-]+$/;
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * The rule `remember` adds for a call:
 *
 * - `Bash` with a simple command and no assignments: `Bash(<name> <subcommand>:*)` when its first argument is a
 *   plain word starting with a letter (`npm test --watch` → `Bash(npm test:*)`, `git status` →
 *   `Bash(git status:*)`), otherwise `Bash(<name>:*)` (`ls -la` → `Bash(ls:*)`). A compound, unreadable or
 *   env-prefixed command cannot be remembered.
 * - `Read`, `Write`, `Edit`: the exact path, `Tool(<file_path>)`; `Glob`, `Grep`: the tool name.
 * - `WebFetch`: the URL's host, `WebFetch(domain:<host>)`.
 * - any other tool: its name.
 *
 * @throws {TerretError} `CannotRemember` when no rule can be derived safely
 */
export function rememberRule(
  call: { readonly name: string; readonly args: Readonly<Record<string, unknown>> },
): string {
  const refuse = (why: string): TerretError =>
    new TerretError(
      "CannotRemember",
      `Cannot remember a rule for the call to "${call.name}": ${why}; answer without remember`,
    );
  let rule: string;
  if (call.name === "Bash") {
    const read = readBashCommand(typeof call.args.command === "string" ? call.args.command : "");
    if (read.kind !== "simple") {
      throw refuse(`the command is not one simple command (${read.reason})`);
    }
    if (read.assignments.length > 0) throw refuse("the command sets environment variables");
    const [name, first] = read.words as [string, string | undefined];
    if (!PLAIN_WORD.test(name)) {
      throw refuse(`the command name ${JSON.stringify(name)} needs quoting`);
    }
    rule = first !== undefined && SUBCOMMAND.test(first)
      ? `Bash(${name} ${first}:*)`
      : `Bash(${name}:*)`;
  } else if (call.name === "Read" || call.name === "Write" || call.name === "Edit") {
    const path = call.args.file_path;
    if (typeof path !== "string" || /[*?()\[\]]/.test(path) || path.split("/").includes("..")) {
      throw refuse("its path cannot be written as a rule");
    }
    rule = `${call.name}(${path})`;
  } else if (call.name === "WebFetch") {
    let host: string;
    try {
      host = new URL(String(call.args.url)).hostname;
    } catch {
      throw refuse("its url is not a URL");
    }
    rule = `WebFetch(domain:${host})`;
  } else rule = call.name;
  try {
    parseRule(rule);
  } catch (error) {
    throw refuse((error as Error).message);
  }
  return rule;
}
