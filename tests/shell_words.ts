/**
 * Quoting for the shell commands tests script: a path from a temp dir or the checkout may hold spaces, quotes or
 * `$` (a clone under "My Projects", a `TMPDIR` with a space).
 *
 * @module
 */

/** One word for a POSIX shell, whatever it holds: single-quoted, each `'` written as `'\''`. */
export function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
