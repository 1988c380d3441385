/**
 * Every code a package throws is declared in its error code table (or a table it builds on), and every declared
 * code is thrown somewhere: the tables in `docs/errors.md` are the whole truth about what a caller can catch.
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type ErrorCodes, HAMES_ERRORS, knownCodes, TerretError } from "@terret/hames";
import { CORE_ERRORS } from "@terret/core";
import { EXEC_ERRORS } from "@terret/exec";
import { WS_ERRORS } from "@terret/ws";
import { COMPOSITION_ERRORS } from "@terret/terret";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

const PACKAGES: readonly [string, ErrorCodes<string> | undefined][] = [
  ["kernel", HAMES_ERRORS],
  ["core", CORE_ERRORS],
  ["exec", EXEC_ERRORS],
  ["interfaces/ws", WS_ERRORS],
  ["interfaces/acp", undefined],
  ["interfaces/cli", undefined],
  ["composition", COMPOSITION_ERRORS],
];

/** The throw sites whose code is not a literal, each with the codes it can carry. */
const COMPUTED_CODES: Readonly<Record<string, readonly string[]>> = {
  "core/agents/_agent_handle.ts: AGENT_SHUTDOWN": ["AgentShutdown"],
  "core/agents/_agent_handle.ts: TURN_CANCELLED": ["TurnCancelled"],
  "exec/fs/deno_file_system.ts: code": [
    "NotFound",
    "NotADirectory",
    "NotAFile",
    "Denied",
    "IoError",
  ],
};

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && entry.name !== "testdata") yield* sources(path);
    else if (entry.isFile && path.endsWith(".ts") && !path.endsWith("_test.ts")) yield path;
  }
}

/** The first argument of each `new TerretError(` in `source` outside doc comments, as written. */
function codeArguments(source: string): string[] {
  const text = source.split("\n").filter((line) => !line.trimStart().startsWith("*")).join("\n");
  const found: string[] = [];
  for (const match of text.matchAll(/new TerretError\(/g)) {
    let depth = 0;
    let end = match.index + match[0].length;
    for (; end < text.length; end++) {
      const char = text[end]!;
      if ("([{".includes(char)) depth++;
      else if (")]}".includes(char)) {
        if (depth === 0) break;
        depth--;
      } else if (char === "," && depth === 0) break;
    }
    found.push(text.slice(match.index + match[0].length, end).trim());
  }
  return found;
}

async function thrownCodes(member: string): Promise<{ codes: Set<string>; computed: string[] }> {
  const codes = new Set<string>();
  const computed: string[] = [];
  for await (const file of sources(join(root, member === "composition" ? "composition" : member))) {
    for (const argument of codeArguments(await Deno.readTextFile(file))) {
      const literals = [...argument.matchAll(/^"([A-Za-z]+)"$|\? "([A-Za-z]+)"|: "([A-Za-z]+)"/g)]
        .map((match) => match[1] ?? match[2] ?? match[3]!);
      if (literals.length > 0) {
        for (const code of literals) codes.add(code);
        continue;
      }
      const site = `${relative(root, file)}: ${argument}`;
      computed.push(site);
      for (const code of COMPUTED_CODES[site] ?? []) codes.add(code);
    }
  }
  return { codes, computed };
}

Deno.test("every code a package throws is declared in its table, and every declared code is thrown", async () => {
  const undeclared: string[] = [];
  const unthrown: string[] = [];
  const computed: string[] = [];
  for (const [member, table] of PACKAGES) {
    const thrown = await thrownCodes(member);
    computed.push(...thrown.computed);
    const known = table === undefined ? new Set<string>() : knownCodes(table);
    for (const code of thrown.codes) if (!known.has(code)) undeclared.push(`${member}: ${code}`);
    for (const code of Object.keys(table?.codes ?? {})) {
      if (!thrown.codes.has(code)) unthrown.push(`${member}: ${code}`);
    }
  }
  assert.deepStrictEqual(undeclared, []);
  assert.deepStrictEqual(unthrown, []);
  assert.deepStrictEqual(computed.sort(), Object.keys(COMPUTED_CODES).sort());
});

Deno.test("each package's guard accepts the codes of the packages below it, not those beside or above it", () => {
  const denied = new TerretError(
    "Denied",
    'Cannot read "/etc/passwd": outside the granted workspace',
  );
  const missing = new TerretError(
    "SessionNotFound",
    'Cannot append to session "s": it does not exist',
  );
  const refused = new TerretError("ConfigCodeRefused", 'Cannot load plugin "p": refused');
  assert.deepStrictEqual(
    ([EXEC_ERRORS, CORE_ERRORS, WS_ERRORS, COMPOSITION_ERRORS, HAMES_ERRORS] as ErrorCodes<
      string
    >[]).map((table) => [
      table.is(denied),
      table.is(missing),
      table.is(refused),
    ]),
    [
      [true, true, false],
      [false, true, false],
      [false, true, false],
      [false, false, true],
      [false, false, false],
    ],
  );
  assert.equal(EXEC_ERRORS.is(missing, "SessionNotFound"), true);
  // @ts-expect-error core's guard does not know exec's codes
  assert.equal(CORE_ERRORS.is(denied, "Denied"), true);
  // @ts-expect-error a misspelt code does not compile
  assert.equal(EXEC_ERRORS.is(denied, "Denid"), false);
});
