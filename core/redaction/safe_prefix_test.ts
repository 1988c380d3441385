import assert from "node:assert/strict";
import { DEFAULT_REDACTION_PATTERNS } from "./redaction_plugin.ts";
import { Redactor } from "./redactor.ts";
import { literalPrefix, safePrefixLength } from "./safe_prefix.ts";

const LITERAL = "hunter2-correct-horse";
const KEY = "sk-or-v1-0123456789abcdefABCDEF";
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----";

/** Streams `deltas` the way the loop does: after each, the safe prefix is appended (scrubbed), the rest held. */
function stream(redactor: Redactor, deltas: readonly string[], window: number): string[] {
  const chunks: string[] = [];
  let held = "";
  for (const delta of deltas) {
    held += delta;
    const cut = redactor.safePrefix(held, window);
    if (cut > 0) {
      chunks.push(redactor.redact(held.slice(0, cut)));
      held = held.slice(cut);
    }
  }
  if (held !== "") chunks.push(redactor.redact(held));
  return chunks;
}

function redactorWithLiteral(): Redactor {
  const redactor = new Redactor({ patterns: [...DEFAULT_REDACTION_PATTERNS] });
  redactor.addLiteral(LITERAL);
  return redactor;
}

Deno.test("safePrefix() never cuts a literal, a pattern match or a PEM block, split into three deltas anywhere", () => {
  const redactor = redactorWithLiteral();
  const text = `intro ${"word ".repeat(6)}${LITERAL} mid ${KEY} then ${PEM} done ${
    "end ".repeat(5)
  }`;
  const expected = redactor.redact(text);
  assert.equal(
    expected.includes("hunter2") || expected.includes("sk-or") || expected.includes("MIIE"),
    false,
  );
  let cases = 0;
  for (let i = 1; i < text.length; i += 1) {
    for (let j = i + 1; j < text.length; j += 3) {
      const chunks = stream(redactor, [text.slice(0, i), text.slice(i, j), text.slice(j)], 40);
      assert.equal(chunks.join(""), expected, `split at ${i} and ${j}`);
      cases++;
    }
  }
  assert.ok(cases > 5_000);
});

Deno.test("safePrefix() with no window still holds what could start a registered literal, split anywhere", () => {
  const redactor = new Redactor();
  redactor.addLiteral(LITERAL);
  const text = `a ${LITERAL} b ${LITERAL.slice(0, 9)} c ${LITERAL}`;
  const expected = redactor.redact(text);
  for (let i = 1; i < text.length; i++) {
    for (let j = i + 1; j < text.length; j++) {
      const chunks = stream(redactor, [text.slice(0, i), text.slice(i, j), text.slice(j)], 0);
      assert.equal(chunks.join(""), expected, `split at ${i} and ${j}`);
    }
  }
});

Deno.test("safePrefix() emits everything before the held tail at once: a long reply streams in many chunks", () => {
  const redactor = redactorWithLiteral();
  const deltas = Array.from({ length: 40 }, (_, i) => `delta ${String(i).padStart(2, "0")} `);
  const chunks = stream(redactor, deltas, 64);
  // 40 deltas of 9 characters with a 64-character window: the first 7 fill the window, then each delta releases
  // one, and the run's end releases the held window.
  assert.equal(chunks.length, 40 - 7 + 1);
  assert.equal(chunks.join(""), deltas.join(""));
  assert.equal(chunks.at(-1)!.length, 64);
});

Deno.test("safePrefixLength() holds only what could start a literal, and a match that may still grow", () => {
  const rules = { literals: [LITERAL], patterns: [/sk-[a-z0-9]{4,}/g], markers: [], window: 0 };
  assert.equal(safePrefixLength("plain text", rules), 10);
  assert.equal(safePrefixLength("say hunt", rules), 4);
  assert.equal(safePrefixLength("say hunter2-x", rules), 13);
  assert.equal(safePrefixLength("key sk-abcd", rules), 4);
  assert.equal(safePrefixLength("key sk-abcd and", rules), 15);
  // A surrogate pair is never split.
  assert.equal(safePrefixLength("a😀", { ...rules, window: 1 }), 1);
});

Deno.test("literalPrefix() reads a pattern's leading literal characters", () => {
  assert.deepStrictEqual(DEFAULT_REDACTION_PATTERNS.map(literalPrefix), [
    "sk-",
    "gh",
    "github_pat_",
    "AKIA",
    "xox",
    "AIza",
    "-----BEGIN ",
  ]);
  assert.equal(literalPrefix("abc+d"), "ab");
  assert.equal(literalPrefix("a\\.b\\d"), "a.b");
});

Deno.test("safePrefixLength() holds the longest tail that starts a literal, as a plain search over every length does", () => {
  /** The reference: every tail length, longest first. */
  const reference = (text: string, literals: readonly string[], window: number): number => {
    let cut = Math.max(0, text.length - window);
    for (const literal of literals) {
      for (let k = Math.min(literal.length - 1, text.length); k > 0; k--) {
        if (text.endsWith(literal.slice(0, k))) {
          cut = Math.min(cut, text.length - k);
          break;
        }
      }
    }
    return cut;
  };
  const literals = ["abab-secret", "zzzz", "b"];
  const alphabet = ["a", "b", "-", "s", "z", "x"];
  // Every text of up to six characters over the alphabet, with literals that overlap themselves.
  const texts = [""];
  for (let length = 1; length <= 6; length++) {
    for (const text of texts.filter((each) => each.length === length - 1)) {
      for (const char of alphabet) texts.push(text + char);
    }
  }
  // Texts holding no whole literal: nothing matches, so only the held tail decides (told or not).
  for (const text of texts.filter((each) => !literals.some((literal) => each.includes(literal)))) {
    const rules = { literals, patterns: [], markers: [], window: 0 };
    const want = reference(text, literals, 0);
    assert.equal(safePrefixLength(text, rules), want, JSON.stringify(text));
    assert.equal(safePrefixLength(text, { ...rules, unmatched: true }), want, JSON.stringify(text));
  }
});

const CERT = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+g\nAwIBAgIEb3Bl\n-----END CERTIFICATE-----";

/** Streams `deltas` as {@linkcode stream} does; returns what was appended before the run's end, and what at it. */
function live(redactor: Redactor, deltas: readonly string[], window: number): [string, string] {
  let before = "";
  let held = "";
  for (const delta of deltas) {
    held += delta;
    const cut = redactor.safePrefix(held, window);
    before += redactor.redact(held.slice(0, cut));
    held = held.slice(cut);
  }
  return [before, redactor.redact(held)];
}

Deno.test("safePrefix() streams a certificate and a token prefix in prose live, and still holds a private key whole", () => {
  const redactor = redactorWithLiteral();
  const text = `Your chain:\n${CERT}\nThe github_pat_ prefix marks a token. Then ${PEM} and ${
    "more words ".repeat(12)
  }`;
  const expected = redactor.redact(text);
  assert.equal(expected.includes("MIIE") || !expected.includes("MIID"), false);
  // Split into three deltas anywhere, every secret still reaches the scrubber whole.
  for (let i = 1; i < text.length; i += 2) {
    for (let j = i + 1; j < text.length; j += 5) {
      const chunks = stream(redactor, [text.slice(0, i), text.slice(i, j), text.slice(j)], 16);
      assert.equal(chunks.join(""), expected, `split at ${i} and ${j}`);
    }
  }
  // In deltas of 7 characters, the certificate and the prose after it are appended before the run ends.
  const deltas = text.match(/[\s\S]{1,7}/g)!;
  const [before, atEnd] = live(redactor, deltas, 16);
  assert.equal(before + atEnd, expected);
  assert.ok(
    before.includes("-----END CERTIFICATE-----\nThe github_pat_ prefix marks a token. Then "),
    before,
  );
  assert.ok(atEnd.length <= 16 + 1, `held to the end: ${JSON.stringify(atEnd)}`);
});

Deno.test("safePrefix() holds from the marker of a pattern it cannot rule out by its language, as before", () => {
  // A lookahead: whether a match can still start is not decided, so the marker holds until the run ends.
  const redactor = new Redactor({ patterns: ["-----BEGIN (?=[A-Z])[\\s\\S]*?-----END X-----"] });
  const text = `Your chain:\n${CERT}\n${"more words ".repeat(12)}`;
  const [before, atEnd] = live(redactor, text.match(/[\s\S]{1,7}/g)!, 16);
  assert.equal(before, "Your chain:\n");
  assert.equal(atEnd, text.slice("Your chain:\n".length));
});
