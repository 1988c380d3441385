import assert from "node:assert/strict";
import { fnmatch, fnmatchToRegExp, PatternSet } from "./fnmatch.ts";

const NAMES = [
  "Read",
  "read",
  "Reads",
  "Bash",
  "terminal_open",
  "terminal_input",
  "terminal_read",
  "terminal_close",
  "mcp__nexus__search",
  "mcp__nexus__",
  "mcp__nexusx__search",
  "mcp__other__search",
  "a-b",
  "a]b",
  "a*b",
  "",
];

function matching(pattern: string): string[] {
  return NAMES.filter((name) => fnmatch(name, pattern));
}

Deno.test("fnmatch() is case-sensitive and matches whole names only", () => {
  assert.deepStrictEqual(matching("Read"), ["Read"]);
  assert.deepStrictEqual(matching("read"), ["read"]);
  assert.deepStrictEqual(matching("Rea"), []);
  assert.deepStrictEqual(matching("ead"), []);
});

Deno.test("fnmatch() * matches any run including the empty one; ? exactly one character", () => {
  assert.deepStrictEqual(matching("mcp__nexus__*"), ["mcp__nexus__search", "mcp__nexus__"]);
  assert.deepStrictEqual(matching("Read*"), ["Read", "Reads"]);
  assert.deepStrictEqual(matching("Read?"), ["Reads"]);
  assert.deepStrictEqual(matching("?ead"), ["Read", "read"]);
  assert.deepStrictEqual(matching("*"), NAMES);
  assert.deepStrictEqual(matching("**"), NAMES);
  assert.deepStrictEqual(matching("mcp__*__search"), [
    "mcp__nexus__search",
    "mcp__nexusx__search",
    "mcp__other__search",
  ]);
  assert.deepStrictEqual(matching(""), [""]);
});

Deno.test("fnmatch() classes: sets, ranges, negation, a leading ] and literal dashes", () => {
  assert.deepStrictEqual(matching("terminal_[ior]*"), [
    "terminal_open",
    "terminal_input",
    "terminal_read",
  ]);
  assert.deepStrictEqual(matching("terminal_[!ior]*"), ["terminal_close"]);
  assert.deepStrictEqual(matching("terminal_[^ior]*"), ["terminal_close"]);
  assert.deepStrictEqual(matching("[A-Z]*"), ["Read", "Reads", "Bash"]);
  assert.deepStrictEqual(matching("[a-z]ead"), ["read"]);
  assert.deepStrictEqual(matching("a[]]b"), ["a]b"]);
  assert.deepStrictEqual(matching("a[-]b"), ["a-b"]);
  assert.deepStrictEqual(matching("a[x-]b"), ["a-b"]);
  assert.deepStrictEqual(matching("a[!]]b"), ["a-b", "a*b"]);
  assert.deepStrictEqual(matching("a[z-a]b"), []);
  assert.deepStrictEqual(matching("a[!z-a]b"), ["a-b", "a]b", "a*b"]);
});

Deno.test("fnmatch() escapes, unclosed brackets and regex metacharacters are literal", () => {
  assert.deepStrictEqual(matching("a\\*b"), ["a*b"]);
  assert.equal(fnmatch("a[b", "a[b"), true);
  assert.equal(fnmatch("ab", "a[b"), false);
  assert.equal(fnmatch("a.b", "a.b"), true);
  assert.equal(fnmatch("axb", "a.b"), false);
  assert.equal(fnmatch("a+b", "a+b"), true);
  assert.equal(fnmatch("a(b)", "a(b)"), true);
  assert.equal(fnmatch("a$b", "a$b"), true);
  assert.equal(fnmatch("a|b", "a|b"), true);
  assert.equal(fnmatch("a", "a|b"), false);
  assert.equal(fnmatch("a^b", "a^b"), true);
  assert.equal(fnmatch("a{2}", "a{2}"), true);
  assert.equal(fnmatch("aa", "a{2}"), false);
  assert.equal(fnmatch("a\\b", "a[\\]b"), true);
});

Deno.test("fnmatchToRegExp() compiles to an anchored expression and refuses non-strings", () => {
  assert.equal(fnmatchToRegExp("mcp__*").source, "^mcp__[\\s\\S]*$");
  assert.equal(fnmatchToRegExp("a?[!b-d]").source, "^a[\\s\\S][^b-d]$");
  assert.throws(
    () => fnmatchToRegExp(3 as unknown as string),
    (error: unknown) =>
      error instanceof TypeError && error.message === "Cannot compile glob 3: it must be a string",
  );
});

Deno.test("PatternSet matches any of its patterns and keeps them in order", () => {
  const set = new PatternSet(["Read", "mcp__nexus__*", "terminal_?pen"]);
  assert.deepStrictEqual(set.patterns, ["Read", "mcp__nexus__*", "terminal_?pen"]);
  assert.deepStrictEqual(NAMES.filter((name) => set.test(name)), [
    "Read",
    "terminal_open",
    "mcp__nexus__search",
    "mcp__nexus__",
  ]);
  assert.deepStrictEqual(NAMES.filter((name) => new PatternSet([]).test(name)), []);
});
