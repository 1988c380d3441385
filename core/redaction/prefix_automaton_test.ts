import assert from "node:assert/strict";
import { seededRandom } from "../testing/seeded_random.ts";
import { PrefixAutomaton } from "./_prefix_automaton.ts";
import { DEFAULT_REDACTION_PATTERNS } from "./redaction_plugin.ts";

interface Case {
  readonly source: string;
  /** The characters the generated texts and completions are made of (code points, astral ones included). */
  readonly alphabet: readonly string[];
  /** The longest completion any beginning of a match needs (`undefined`: too long to search every string). */
  readonly reach: number | undefined;
  /** Makes one match of the pattern. */
  readonly match: (
    pick: <T>(items: readonly T[]) => T,
    count: (min: number, max: number) => number,
  ) => string;
}

const CASES: readonly Case[] = [
  {
    source: "ab[cd]{2,3}(?:x|yz)*e",
    alphabet: [..."abcdxyze"],
    reach: 4,
    match: (pick, count) =>
      `ab${Array.from({ length: count(2, 3) }, () => pick(["c", "d"])).join("")}${
        Array.from({ length: count(0, 3) }, () => pick(["x", "yz"])).join("")
      }e`,
  },
  {
    // A small PEM block: a header of words, a lazy body, a footer.
    source: "--B (?:[A-C]+ )*K--[\\s\\S]*?--E--",
    alphabet: [..."-BACK E\n"],
    reach: undefined,
    match: (pick, count) =>
      `--B ${Array.from({ length: count(0, 2) }, () => `${pick(["A", "BC", "C"])} `).join("")}K--${
        Array.from({ length: count(0, 4) }, () => pick([..."AK -\n"])).join("")
      }--E--`,
  },
  {
    source: "x[^y\\n]?y|xz{1,2}(?<tail>w|v)+",
    alphabet: [..."xyzwv\n"],
    reach: 2,
    match: (pick, count) =>
      pick([true, false])
        ? `x${pick(["", "x", "z", "w"])}y`
        : `x${"z".repeat(count(1, 2))}${
          Array.from({ length: count(1, 3) }, () => pick(["w", "v"])).join("")
        }`,
  },
  {
    source: "\\u0061\\x62[\\d\\-]+\\.\\s",
    alphabet: [..."ab1-. x"],
    reach: 4,
    match: (pick, count) =>
      `ab${Array.from({ length: count(1, 3) }, () => pick(["1", "-"])).join("")}. `,
  },
  {
    source: "😀[😀a]\\u{1F600}?q.",
    alphabet: ["😀", "a", "q", "\n", "b"],
    reach: 3,
    match: (pick) => `😀${pick(["😀", "a"])}${pick(["", "😀"])}q${pick(["a", "😀", "b"])}`,
  },
];

/** Every string of `alphabet` of length 0 to `max`. */
function* strings(alphabet: readonly string[], max: number): Generator<string> {
  yield "";
  let level = [""];
  for (let length = 1; length <= max; length++) {
    const next: string[] = [];
    for (const prefix of level) for (const char of alphabet) next.push(prefix + char);
    yield* next;
    level = next;
  }
}

Deno.test("PrefixAutomaton: every beginning of a match is live, text it calls dead never starts one, live text does", () => {
  for (const [index, { source, alphabet, reach, match }] of CASES.entries()) {
    const next = seededRandom(index + 1);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const count = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
    const automaton = PrefixAutomaton.compile(source);
    assert.ok(automaton !== undefined, source);
    const whole = new RegExp(`^(?:${source})$`, "u");
    let dead = 0;
    let live = 0;
    for (let round = 0; round < 150; round++) {
      const example = match(pick, count);
      assert.ok(
        whole.test(example),
        `${source}: the generator made a non-match ${JSON.stringify(example)}`,
      );
      const chars = [...example];
      for (let k = 0; k <= chars.length; k++) {
        const prefix = chars.slice(0, k).join("");
        assert.equal(
          automaton.live(prefix, 0),
          true,
          `${source}: ${JSON.stringify(prefix)} begins a match`,
        );
        // Offset into a longer text: only what follows `from` counts.
        assert.equal(automaton.live(`zz${prefix}`, 2), true);
      }
      // A beginning of a match with one character changed: live or dead, a dead one must begin no match.
      const at = Math.floor(next() * chars.length);
      const changed = [...chars.slice(0, at), pick(alphabet)].join("");
      const within = [...changed].some((_, k) => whole.test([...changed].slice(0, k + 1).join("")));
      if (automaton.live(changed, 0)) {
        if (reach === undefined || within) continue;
        live++;
        const begins = [...strings(alphabet, reach)].some((rest) => whole.test(changed + rest));
        assert.ok(begins, `${source}: ${JSON.stringify(changed)} was called live`);
        continue;
      }
      dead++;
      const begins = [...strings(alphabet, 3)].find((rest) => whole.test(changed + rest));
      assert.equal(begins, undefined, `${source}: ${JSON.stringify(changed)} was called dead`);
      assert.equal(within, false, `${source}: ${JSON.stringify(changed)} holds a whole match`);
    }
    assert.ok(dead >= 10, `${source}: only ${dead} dead texts were checked`);
    if (reach !== undefined) {
      assert.ok(live >= 10, `${source}: only ${live} live texts were checked`);
    }
  }
});

Deno.test("PrefixAutomaton: the default PEM pattern stays live through a key and dies on a certificate", () => {
  const pem = DEFAULT_REDACTION_PATTERNS.find((source) => source.startsWith("-----BEGIN"))!;
  const automaton = PrefixAutomaton.compile(pem)!;
  const key =
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY";
  for (let k = 0; k <= key.length; k++) {
    assert.equal(automaton.live(key.slice(0, k), 0), true, `${k}`);
  }
  assert.equal(automaton.live("-----BEGIN CERTIFICATE-----\nMIID", 0), false);
  // "KEY" could still begin a word before "PRIVATE KEY"; its dashes cannot.
  assert.equal(automaton.live("-----BEGIN PUBLIC KEY", 0), true);
  assert.equal(automaton.live("-----BEGIN PUBLIC KEY-----", 0), false);
  assert.equal(automaton.live("-----BEGIN RSA PRIVATE", 0), true);
  assert.equal(automaton.live("-----BEGIN RSA PRIVATE KEY-", 0), true);
  assert.equal(automaton.live("-----BEGIN RSA PRIVATE KEY+", 0), false);
  const github = PrefixAutomaton.compile(DEFAULT_REDACTION_PATTERNS[2]!)!;
  assert.equal(github.live("github_pat_ tokens start", 0), false);
  assert.equal(github.live("github_pat_11ABCDEFG", 0), true);
});

Deno.test("PrefixAutomaton: a pattern it cannot decide by its language is not compiled", () => {
  for (
    const source of [
      "^abc",
      "abc$",
      "ab\\bcd",
      "ab\\Bcd",
      "ab(?=c)",
      "ab(?!c)",
      "(?<=a)bc",
      "(?<!a)bc",
      "(a)b\\1",
      "(?<x>a)\\k<x>",
      "ab\\p{L}",
      "(?i:abc)d",
      "a{1,30000}",
      `${"(?:".repeat(20_000)}a${")".repeat(20_000)}`,
    ]
  ) {
    assert.equal(PrefixAutomaton.compile(source), undefined, source);
  }
  // What it does decide, including a class with `\b` (a backspace there) and `[^]`.
  for (const source of ["a[\\b]", "a[^]b", "a[]b", "a{2}", "a{2,}", "(?<n>a)|b", "\\/\\$"]) {
    assert.ok(PrefixAutomaton.compile(source) !== undefined, source);
  }
  assert.equal(PrefixAutomaton.compile("a[\\b]")!.live("a\b", 0), true);
  assert.equal(PrefixAutomaton.compile("a[\\b]")!.live("ab", 0), false);
});
