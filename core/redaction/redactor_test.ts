import assert from "node:assert/strict";
import { DEFAULT_REDACTION_TOKEN, isRedacted, Redactor, tokenIsToolName } from "./redactor.ts";
import { TOOL_NAME_PATTERN } from "../tools/tool.ts";

Deno.test("Redactor.redact() replaces pattern matches and literals, longest literal first", () => {
  const redactor = new Redactor({ patterns: ["sk-[a-z0-9]{8,}", "AKIA[0-9A-Z]{16}"] });
  const offA = redactor.addLiteral("hunter2");
  redactor.addLiteral("hunter2hunter2");
  assert.equal(
    redactor.redact("a sk-abcdefgh12 b AKIAABCDEFGHIJKLMNOP c hunter2hunter2 d hunter2 e sk-short"),
    "a -REDACTED- b -REDACTED- c -REDACTED- d -REDACTED- e sk-short",
  );
  offA();
  offA();
  assert.equal(redactor.literalCount, 1);
  assert.equal(redactor.redact("hunter2 / hunter2hunter2"), "hunter2 / -REDACTED-");
});

Deno.test("Redactor: a token with $ patterns is inserted literally", () => {
  const redactor = new Redactor({ patterns: ["s3cr[e]t"], replacement: "$&$1" });
  assert.equal(redactor.redact("x s3cret y"), "x $&$1 y");
});

Deno.test("Redactor refuses bad patterns, patterns matching the token or the empty string, bad tokens", () => {
  assert.throws(() => new Redactor({ patterns: ["(unclosed"] }), {
    name: "TypeError",
    message: /^Cannot compile redaction pattern 0 "\(unclosed": /,
  });
  assert.throws(() => new Redactor({ patterns: ["x*"] }), {
    name: "TypeError",
    message: 'Cannot use redaction pattern 0 "x*": it matches the empty string',
  });
  assert.throws(() => new Redactor({ patterns: ["[A-Z-]{5,}"] }), {
    name: "TypeError",
    message:
      'Cannot use redaction pattern 0 "[A-Z-]{5,}": it matches the replacement token "-REDACTED-"',
  });
  assert.throws(() => new Redactor({ replacement: "" }), {
    name: "TypeError",
    message: 'Cannot use redaction token "": it must be a string of 1 to 64 characters',
  });
  const redactor = new Redactor();
  assert.throws(() => redactor.addLiteral("abc"), {
    name: "TypeError",
    message: "Cannot register a secret for redaction: it must be at least 4 characters",
  });
});

Deno.test("isRedacted() looks at every string value and every key, at any depth", () => {
  const t = DEFAULT_REDACTION_TOKEN;
  assert.deepStrictEqual(
    [
      isRedacted("plain", t),
      isRedacted(`a${t}b`, t),
      isRedacted({ command: "echo ok", n: 1, list: [true, null] }, t),
      isRedacted({ env: { [t]: "value" } }, t),
      isRedacted({ deep: [{ x: [`${t}`] }] }, t),
      isRedacted([{ key: "v" }, { [`prefix${t}`]: 0 }], t),
      isRedacted(42, t),
    ],
    [false, true, false, true, true, true, false],
  );
  const cyclic: Record<string, unknown> = { a: "x" };
  cyclic.self = cyclic;
  assert.equal(isRedacted(cyclic, t), false);
});

Deno.test("the default token is provider-safe but never itself a tool name", () => {
  assert.match(DEFAULT_REDACTION_TOKEN, /^[A-Za-z0-9_-]+$/);
  assert.equal(TOOL_NAME_PATTERN.test(DEFAULT_REDACTION_TOKEN), false);
  assert.equal(tokenIsToolName(DEFAULT_REDACTION_TOKEN), false);
  assert.equal(tokenIsToolName("REDACTED"), true);
});

Deno.test("Redactor.redact() finds every match whatever the mix of literals and patterns, added or removed at any time", () => {
  const redactor = new Redactor({ patterns: ["AKIA[0-9A-Z]{16}", "(?i:bearer) [a-z]{12,}"] });
  const key = "AKIAABCDEFGHIJKLMNOP";
  assert.equal(redactor.redact("plain text"), "plain text");
  assert.equal(redactor.redact(`id ${key}.`), "id -REDACTED-.");
  assert.equal(redactor.redact("BEARER abcdefghijklmn"), "-REDACTED-");
  // A literal added after a redaction is found by the next one, and forgotten once removed.
  const remove = redactor.addLiteral("hunter2hunter2");
  assert.equal(redactor.redact("pw hunter2hunter2"), "pw -REDACTED-");
  remove();
  assert.equal(redactor.redact("pw hunter2hunter2"), "pw hunter2hunter2");
  // Literals with regular expression syntax, and patterns that cannot be joined into one alternation (a
  // backreference, a named group) are still matched exactly.
  const odd = new Redactor({ patterns: ["(x)\\1{3}", "(p)(q)\\2", "(?<tag>zq)[0-9]{2}"] });
  odd.addLiteral("a\\1(b)");
  odd.addLiteral("$&.*");
  assert.equal(
    odd.redact("xxxx zq12 a\\1(b) $&.* xx"),
    "-REDACTED- -REDACTED- -REDACTED- -REDACTED- xx",
  );
  assert.equal(odd.redact("x zq1 ab"), "x zq1 ab");
  assert.equal(odd.redact("pqq"), "-REDACTED-");
  assert.equal(odd.redact("pqp"), "pqp");
});
