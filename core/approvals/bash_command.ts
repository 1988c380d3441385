/**
 * How a Bash command is read for permission rules: a small, conservative reading of POSIX shell words that only
 * ever recognises a **simple command** (optional `NAME=value` assignments, a command name, arguments). Anything the
 * shell could turn into another command (`;`, `&`, `|`, `<`, `>`, `(`, `)`, a newline, `$`, a backtick, a comment, a
 * reserved word, a glob in the command name) makes the command **compound**: no allow rule matches it, so it is
 * asked about, and every piece of it is still checked against the deny rules.
 *
 * Grammar (docs/security.md, "Permission rules"):
 *
 * - Words are separated by unquoted spaces and tabs.
 * - `'…'` is literal; `"…"` is literal except that `\` escapes `$`, `` ` ``, `"`, `\` and a newline, and an
 *   unescaped `$` or `` ` `` in it makes the command compound; `\x` outside quotes is the literal `x`, and
 *   backslash-newline joins lines.
 * - Leading words of the form `NAME=value` (unquoted name) are environment assignments.
 * - An unterminated quote or a trailing backslash makes the command unreadable (asked about, never matched).
 *
 * @module
 */

/** A Bash command as the rules see it. */
export type BashCommand =
  | {
    /** One simple command: the words after the assignments, as the shell would pass them. */
    readonly kind: "simple";
    readonly assignments: readonly string[];
    readonly words: readonly string[];
  }
  | {
    /** Anything more than one simple command; `reason` names the first construct found. */
    readonly kind: "compound";
    readonly reason: string;
  }
  | {
    /** Text the reading above cannot take apart (an unterminated quote, a trailing backslash, nothing at all). */
    readonly kind: "unreadable";
    readonly reason: string;
  };

const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "case",
  "esac",
  "for",
  "select",
  "while",
  "until",
  "do",
  "done",
  "function",
  "time",
  "coproc",
  "{",
  "}",
  "!",
  "[[",
  "]]",
]);

const OPERATORS: Readonly<Record<string, string>> = {
  ";": "a command list (;)",
  "&": "a background or && list (&)",
  "|": "a pipe or || list (|)",
  "<": "a redirection (<)",
  ">": "a redirection (>)",
  "(": "a subshell (()",
  ")": "a subshell ())",
  "\n": "more than one line",
  "`": "a command substitution (`)",
};

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * Reads one Bash command string.
 *
 * @example
 * ```ts
 * import { readBashCommand } from "@terret/core/approvals";
 * console.log(readBashCommand("npm 'test' --watch")); // { kind: "simple", assignments: [], words: ["npm", "test", "--watch"] }
 * console.log(readBashCommand("npm test; rm -rf /").kind); // "compound"
 * ```
 */
export function readBashCommand(text: string): BashCommand {
  const words: { text: string; raw: string; glob: boolean }[] = [];
  let word: { text: string; raw: string; glob: boolean } | undefined;
  const open = (): { text: string; raw: string; glob: boolean } =>
    word ??= { text: "", raw: "", glob: false };
  const compound = (reason: string): BashCommand => ({ kind: "compound", reason });
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === " " || c === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
      continue;
    }
    if (c === "\\") {
      if (i + 1 >= text.length) return { kind: "unreadable", reason: "it ends with a backslash" };
      const next = text[++i]!;
      if (next === "\n") continue;
      const w = open();
      w.text += next;
      w.raw += "\\" + next;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { kind: "unreadable", reason: "a single quote is not closed" };
      const w = open();
      w.text += text.slice(i + 1, end);
      w.raw += text.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === '"') {
      const w = open();
      let j = i + 1;
      for (;; j++) {
        if (j >= text.length) return { kind: "unreadable", reason: "a double quote is not closed" };
        const d = text[j]!;
        if (d === '"') break;
        if (d === "\\" && j + 1 < text.length && '$`"\\\n'.includes(text[j + 1]!)) {
          if (text[j + 1] !== "\n") w.text += text[j + 1];
          j++;
          continue;
        }
        if (d === "$" && j + 1 < text.length && /[A-Za-z0-9_{(@*#?$!-]/.test(text[j + 1]!)) {
          return compound("an expansion or substitution ($) inside double quotes");
        }
        if (d === "`") return compound("a command substitution (`) inside double quotes");
        w.text += d;
      }
      w.raw += text.slice(i, j + 1);
      i = j;
      continue;
    }
    const operator = OPERATORS[c];
    if (operator !== undefined) return compound(operator);
    if (c === "\r") return compound("a carriage return");
    if (c === "$" && i + 1 < text.length && /[A-Za-z0-9_{(@*#?$!-]/.test(text[i + 1]!)) {
      return compound(text[i + 1] === "(" ? "a command substitution ($()" : "an expansion ($)");
    }
    if (c === "#" && word === undefined) return compound("a comment (#)");
    const w = open();
    if (c === "*" || c === "?" || c === "[") w.glob = true;
    w.text += c;
    w.raw += c;
  }
  if (word !== undefined) words.push(word);
  let first = 0;
  while (first < words.length && ASSIGNMENT.test(words[first]!.raw)) first++;
  const name = words[first];
  if (name === undefined) {
    return first === 0
      ? { kind: "unreadable", reason: "it is empty" }
      : compound("assignments without a command");
  }
  if (RESERVED.has(name.raw)) return compound(`the reserved word "${name.raw}"`);
  if (name.glob) return compound("a pattern (*, ?, [) in the command name");
  return {
    kind: "simple",
    assignments: words.slice(0, first).map((w) => w.text),
    words: words.slice(first).map((w) => w.text),
  };
}

/**
 * The pieces of a command a deny rule is checked against: the text split at every operator character (`;`, `&`,
 * `|`, `<`, `>`, `(`, `)`, newline, backtick, `$(`), quoted or not, each piece read as a command with its leading
 * assignments dropped. Over-splitting can only make a deny rule match more, never less.
 */
export function bashPieces(text: string): string[][] {
  const pieces: string[][] = [];
  for (const part of text.replace(/\\\n/g, " ").split(/\$\(|[;&|<>()\n`\r]/)) {
    const read = readBashCommand(part);
    const words = read.kind === "simple"
      ? [...read.words]
      : part.split(/[ \t]+/).filter((w) => w !== "").map(unquoteLoosely);
    while (words.length > 0 && ASSIGNMENT.test(words[0]!)) words.shift();
    if (words.length > 0) pieces.push(words);
  }
  return pieces;
}

function unquoteLoosely(word: string): string {
  return word.replace(/["'\\]/g, "");
}
