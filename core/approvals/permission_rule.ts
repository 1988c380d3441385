/**
 * Permission rules in Claude Code's shape: `Tool`, `mcp__server__*`, `Bash(git status)`, `Bash(npm test:*)`,
 * `Read(./src/**)`, `WebFetch(domain:example.com)`. A rule names the calls an `allow`, `ask` or `deny` list is about.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { fnmatch } from "../tools/fnmatch.ts";
import { bashPieces, readBashCommand } from "./bash_command.ts";

/** The tools whose rules take a path specifier, and the argument holding the path. */
const PATH_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ["file_path"],
  Write: ["file_path"],
  Edit: ["file_path"],
  Glob: ["path"],
  Grep: ["path"],
};

/** One parsed rule. */
export type PermissionRule =
  | { readonly text: string; readonly kind: "tool"; readonly pattern: string }
  | {
    readonly text: string;
    readonly kind: "bash";
    readonly words: readonly string[];
    readonly prefix: boolean;
  }
  | { readonly text: string; readonly kind: "path"; readonly tool: string; readonly glob: RegExp }
  | { readonly text: string; readonly kind: "domain"; readonly pattern: string };

/** The call a rule is matched against. */
export interface RuleCall {
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** The workspace directories: an absolute path under one is matched relative to it. */
  readonly dirs?: readonly string[];
}

const RULE = /^([A-Za-z0-9_*?.\[\]-]+)(?:\((.*)\))?$/s;

/**
 * Parses one rule.
 *
 * @throws {TerretError} `InvalidRule` with a message saying what is wrong and how to write it
 */
export function parseRule(text: string): PermissionRule {
  const bad = (why: string): TerretError =>
    new TerretError("InvalidRule", `Cannot read permission rule ${JSON.stringify(text)}: ${why}`);
  if (typeof text !== "string" || text.trim() === "") throw bad("it is empty");
  const match = RULE.exec(text);
  if (match === null) {
    throw bad('expected Tool or Tool(specifier), e.g. "Bash(npm test:*)" or "mcp__github__*"');
  }
  const [, tool, spec] = match as unknown as [string, string, string | undefined];
  if (spec === undefined) return { text, kind: "tool", pattern: tool };
  if (spec.trim() === "") throw bad("the specifier in parentheses is empty");
  if (tool === "Bash") {
    const prefix = spec.endsWith(":*");
    const body = prefix ? spec.slice(0, -2) : spec;
    if (body.includes("*")) {
      throw bad('"*" is only allowed as a trailing ":*" (a prefix rule such as "Bash(git log:*)")');
    }
    const read = readBashCommand(body);
    if (read.kind !== "simple" || read.assignments.length > 0 && read.words.length === 0) {
      throw bad(
        `a Bash rule names one simple command (${read.kind === "simple" ? "" : read.reason})`,
      );
    }
    return { text, kind: "bash", words: [...read.assignments, ...read.words], prefix };
  }
  if (tool in PATH_TOOLS) {
    if (spec.split("/").includes("..")) throw bad('a path rule may not contain ".."');
    return { text, kind: "path", tool, glob: pathGlob(normalizePath(spec)) };
  }
  if (tool === "WebFetch") {
    if (!spec.startsWith("domain:") || spec.length === "domain:".length) {
      throw bad('a WebFetch rule is "WebFetch(domain:example.com)"');
    }
    return { text, kind: "domain", pattern: spec.slice("domain:".length).toLowerCase() };
  }
  throw bad(
    `tool "${tool}" takes no specifier (only Bash, Read, Write, Edit, Glob, Grep and WebFetch do); ` +
      `write "${tool}" alone`,
  );
}

/** True when the rule covers the call. A `Bash` rule with a specifier never covers a compound command. */
export function ruleMatches(rule: PermissionRule, call: RuleCall): boolean {
  switch (rule.kind) {
    case "tool":
      return fnmatch(call.name, rule.pattern);
    case "bash": {
      if (call.name !== "Bash" || typeof call.args.command !== "string") return false;
      const read = readBashCommand(call.args.command);
      if (read.kind !== "simple") return false;
      return wordsMatch(rule, [...read.assignments, ...read.words]);
    }
    case "path": {
      if (call.name !== rule.tool) return false;
      const path = pathArg(call);
      return path !== undefined && rule.glob.test(path);
    }
    case "domain": {
      if (call.name !== "WebFetch" || typeof call.args.url !== "string") return false;
      let host: string;
      try {
        host = new URL(call.args.url).hostname.toLowerCase();
      } catch {
        return false;
      }
      return fnmatch(host, rule.pattern);
    }
  }
}

/**
 * True when a deny rule covers the call or any piece of it: for Bash, each command of a compound one (split at
 * every operator, quoted or not, assignments dropped) is checked, so `ls; rm -rf /` is denied by `Bash(rm:*)`, and
 * a command named by a path is also checked by its base name (`/bin/rm` as `rm`).
 */
export function denyMatches(rule: PermissionRule, call: RuleCall): boolean {
  if (rule.kind !== "bash") return ruleMatches(rule, call);
  if (call.name !== "Bash" || typeof call.args.command !== "string") return false;
  if (ruleMatches(rule, call)) return true;
  return bashPieces(call.args.command).some((words) =>
    wordsMatch(rule, words) || wordsMatch(rule, [basename(words[0]!), ...words.slice(1)])
  );
}

function basename(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

function wordsMatch(
  rule: { readonly words: readonly string[]; readonly prefix: boolean },
  words: readonly string[],
): boolean {
  if (rule.prefix ? words.length < rule.words.length : words.length !== rule.words.length) {
    return false;
  }
  return rule.words.every((word, i) => words[i] === word);
}

function pathArg(call: RuleCall): string | undefined {
  const keys = PATH_TOOLS[call.name] ?? [];
  let raw: unknown = undefined;
  for (const key of keys) raw ??= call.args[key];
  if (raw === undefined && (call.name === "Glob" || call.name === "Grep")) raw = ".";
  if (typeof raw !== "string" || raw === "") return undefined;
  let path = raw;
  if (path.startsWith("/")) {
    for (const dir of call.dirs ?? []) {
      const base = dir.endsWith("/") ? dir : dir + "/";
      if (path === dir) path = ".";
      else if (path.startsWith(base)) path = path.slice(base.length);
      else continue;
      break;
    }
  }
  if (path.split("/").includes("..")) return undefined;
  return normalizePath(path);
}

function normalizePath(path: string): string {
  let out = path.replace(/\/+/g, "/");
  while (out.startsWith("./")) out = out.slice(2);
  if (out.length > 1 && out.endsWith("/")) out = out.slice(0, -1);
  return out === "" ? "." : out;
}

/** `**` crosses directories, `*` and `?` stay within one; `dir/**` also covers `dir` itself. */
function pathGlob(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      if (pattern[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else if (source.endsWith("/") && i + 2 === pattern.length) {
        source = source.slice(0, -1) + "(?:/.*)?";
        i += 1;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}
