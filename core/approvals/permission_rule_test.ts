import assert from "node:assert/strict";
import { CORE_ERRORS } from "../errors.ts";
import { readBashCommand } from "./bash_command.ts";
import { denyMatches, parseRule, ruleMatches } from "./permission_rule.ts";
import { rememberRule } from "./remember_rule.ts";

/**
 * The Bash matcher table: each command against the allow rules `Bash(npm test:*)`, `Bash(git status)` and
 * `Bash(ls:*)`, and the deny rules `Bash(rm:*)` and `Bash(curl:*)`. `allow` means an allow rule matches (the call
 * runs without asking), `deny` that a deny rule matches, `ask` that neither does.
 */
const TABLE: readonly (readonly [command: string, decision: "allow" | "ask" | "deny"])[] = [
  // Plain and prefix matches, at word boundaries.
  ["npm test", "allow"],
  ["npm test --watch=false", "allow"],
  ["npm  test   -- --grep x", "allow"],
  ["npm testing", "ask"],
  ["npm", "ask"],
  ["npm run test", "ask"],
  ["git status", "allow"],
  ["git status --short", "ask"],
  ["git  status", "allow"],
  ["ls", "allow"],
  ["ls -la src", "allow"],
  // Quoting and escaping produce the same words the shell would pass.
  ["npm 'test'", "allow"],
  ['npm "test" --reporter=dot', "allow"],
  ["n\\pm test", "allow"],
  ["'npm test'", "ask"],
  ["npm test 'a; rm -rf /'", "deny"],
  ['npm test "$(rm -rf /)"', "deny"],
  ['npm test "$HOME"', "ask"],
  ["npm test 'it''s'", "allow"],
  ["npm test \\; echo hi", "allow"],
  // Compound commands are never matched by an allow rule; deny rules see every piece.
  ["npm test; rm -rf /", "deny"],
  ["npm test && curl https://evil.example", "deny"],
  ["npm test || echo failed", "ask"],
  ["npm test & sleep 1", "ask"],
  ["npm test | tee log.txt", "ask"],
  ["ls | rm -rf /", "deny"],
  ["(npm test)", "ask"],
  ["{ npm test; }", "ask"],
  ["if true; then npm test; fi", "ask"],
  ["! npm test", "ask"],
  // Substitution, expansion and redirection.
  ["npm test $(curl x)", "deny"],
  ["npm test `rm -rf /`", "deny"],
  ["npm test $FLAGS", "ask"],
  ["npm test ${FLAGS}", "ask"],
  ["npm test > out.txt", "ask"],
  ["npm test 2>&1", "ask"],
  ["npm test < input.txt", "ask"],
  ["ls <(rm -rf /)", "deny"],
  ["echo $(ls)", "ask"],
  // Multi-line and line continuations.
  ["npm test\nrm -rf /", "deny"],
  ["npm test\ncurl x", "deny"],
  ["npm \\\ntest", "allow"],
  ["npm test # comment", "ask"],
  ["npm test\r", "ask"],
  // Environment prefixes are never matched by a rule without them; deny still sees the command.
  ["NODE_OPTIONS=--require=./evil.js npm test", "ask"],
  ["FOO=1 npm test", "ask"],
  ["FOO=1 rm -rf /", "deny"],
  ["FOO=1", "ask"],
  ["env npm test", "ask"],
  // Other commands, globs in the command name, unreadable text.
  ["rm -rf /", "deny"],
  ["/bin/rm -rf /", "deny"],
  ["./ls", "ask"],
  ["curl https://example.com", "deny"],
  ["np* test", "ask"],
  ["npm test 'unterminated", "ask"],
  ["npm test \\", "ask"],
  ["", "ask"],
];

const ALLOW = ["Bash(npm test:*)", "Bash(git status)", "Bash(ls:*)"].map(parseRule);
const DENY = ["Bash(rm:*)", "Bash(curl:*)"].map(parseRule);

function decide(command: string): "allow" | "ask" | "deny" {
  const call = { name: "Bash", args: { command } };
  if (DENY.some((rule) => denyMatches(rule, call))) return "deny";
  if (ALLOW.some((rule) => ruleMatches(rule, call))) return "allow";
  return "ask";
}

Deno.test("the Bash matcher decides every command of the table as expected", () => {
  assert.ok(TABLE.length >= 40);
  const got = TABLE.map(([command]) => [command, decide(command)]);
  assert.deepStrictEqual(got, TABLE.map(([command, decision]) => [command, decision]));
});

Deno.test("readBashCommand() reads words, assignments and why a command is compound", () => {
  assert.deepStrictEqual(readBashCommand(`A=1 B='x y' git "log" --oneline`), {
    kind: "simple",
    assignments: ["A=1", "B=x y"],
    words: ["git", "log", "--oneline"],
  });
  assert.deepStrictEqual(readBashCommand("a | b"), {
    kind: "compound",
    reason: "a pipe or || list (|)",
  });
  assert.deepStrictEqual(readBashCommand("echo 'x"), {
    kind: "unreadable",
    reason: "a single quote is not closed",
  });
});

Deno.test("parseRule() reads Claude Code's shapes and refuses malformed rules with a message", () => {
  const call = (name: string, args: Record<string, unknown>) => ({ name, args, dirs: ["/work"] });
  assert.equal(ruleMatches(parseRule("mcp__github__*"), call("mcp__github__issues", {})), true);
  assert.equal(ruleMatches(parseRule("mcp__github__*"), call("mcp__gitlab__issues", {})), false);
  assert.equal(
    ruleMatches(parseRule("Read(./src/**)"), call("Read", { file_path: "/work/src/a/b.ts" })),
    true,
  );
  assert.equal(ruleMatches(parseRule("Read(./src/**)"), call("Read", { file_path: "src" })), true);
  assert.equal(
    ruleMatches(parseRule("Read(./src/**)"), call("Read", { file_path: "/work/lib/a.ts" })),
    false,
  );
  assert.equal(
    ruleMatches(parseRule("Read(./src/**)"), call("Read", { file_path: "/work/src/../.env" })),
    false,
  );
  assert.equal(
    ruleMatches(parseRule("Read(src/*.ts)"), call("Read", { file_path: "src/a/b.ts" })),
    false,
  );
  assert.equal(
    ruleMatches(
      parseRule("WebFetch(domain:example.com)"),
      call("WebFetch", { url: "https://example.com/x" }),
    ),
    true,
  );
  assert.equal(
    ruleMatches(
      parseRule("WebFetch(domain:example.com)"),
      call("WebFetch", { url: "https://example.com.evil.io/" }),
    ),
    false,
  );
  const refusals: [string, string][] = [
    ["", 'Cannot read permission rule "": it is empty'],
    [
      "Bash(git *)",
      'Cannot read permission rule "Bash(git *)": "*" is only allowed as a trailing ":*" (a prefix rule ' +
      'such as "Bash(git log:*)")',
    ],
    [
      "Bash(a && b)",
      'Cannot read permission rule "Bash(a && b)": a Bash rule names one simple command (a background or ' +
      "&& list (&))",
    ],
    [
      "WebFetch(example.com)",
      'Cannot read permission rule "WebFetch(example.com)": a WebFetch rule is ' +
      '"WebFetch(domain:example.com)"',
    ],
    [
      "Task(x)",
      'Cannot read permission rule "Task(x)": tool "Task" takes no specifier (only Bash, Read, Write, Edit, ' +
      'Glob, Grep and WebFetch do); write "Task" alone',
    ],
    ["Read(../x)", 'Cannot read permission rule "Read(../x)": a path rule may not contain ".."'],
    [
      "Bash(",
      'Cannot read permission rule "Bash(": expected Tool or Tool(specifier), e.g. "Bash(npm test:*)" or ' +
      '"mcp__github__*"',
    ],
  ];
  for (const [text, message] of refusals) {
    assert.throws(() => parseRule(text), (error: unknown) => {
      assert.ok(CORE_ERRORS.is(error, "InvalidRule"), text);
      assert.equal(error.message, message);
      return true;
    });
  }
});

Deno.test("rememberRule() derives the documented rule, or refuses what it cannot remember safely", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["Bash", { command: "npm test --watch" }, "Bash(npm test:*)"],
    ["Bash", { command: "git status" }, "Bash(git status:*)"],
    ["Bash", { command: "ls -la" }, "Bash(ls:*)"],
    ["Read", { file_path: "/work/a.txt" }, "Read(/work/a.txt)"],
    ["WebFetch", { url: "https://docs.example.com/x" }, "WebFetch(domain:docs.example.com)"],
    ["mcp__github__issues", {}, "mcp__github__issues"],
  ];
  assert.deepStrictEqual(
    cases.map(([name, args]) => rememberRule({ name, args })),
    cases.map(([, , rule]) => rule),
  );
  assert.throws(
    () => rememberRule({ name: "Bash", args: { command: "npm test && curl x" } }),
    (error: unknown) =>
      CORE_ERRORS.is(error, "CannotRemember") &&
      error.message ===
        'Cannot remember a rule for the call to "Bash": the command is not one simple command (a ' +
          "background or && list (&)); answer without remember",
  );
  assert.throws(
    () => rememberRule({ name: "Bash", args: { command: "FOO=1 npm test" } }),
    (error: unknown) => CORE_ERRORS.is(error, "CannotRemember"),
  );
});
