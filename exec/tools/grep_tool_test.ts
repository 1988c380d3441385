// deno-lint-ignore-file no-console
import assert from "node:assert/strict";
import { mountTools, textOf, type ToolWorld } from "./_testing.ts";

const hasRipgrep = await new Deno.Command("rg", {
  args: ["--version"],
  stdout: "null",
  stderr: "null",
})
  .output().then((out) => out.success, () => false);
if (!hasRipgrep) {
  console.warn("\n!!! GREP PARITY LANE SKIPPED: no `rg` on PATH (apt-get install ripgrep)\n");
}

const CORPUS: Record<string, string> = {
  "src/app.ts":
    "import x from 'y';\n// TODO: fix the thing\nexport const answer = 42;\nconst TODO_list = [];\n",
  "src/util.js": "function todo() {}\n\nexport default todo; // todo\n",
  "src/deep/nested/mod.ts":
    "line 1\nline 2\nTODO deep\nline 4\nline 5\nline 6\nTODO again\nline 8\n",
  "src/a-b.ts": "dash TODO\n",
  "src/a/b.ts": "slash TODO\n",
  "docs/readme.md": "# Title\n\nSome TODO in docs\n",
  "notes.txt": "crlf TODO\r\nsecond\r\n",
  "unicode.txt": "naïve café TODO ünïcödé\n",
  "build/out.ts": "TODO ignored build output\n",
  "logs/app.log": "TODO ignored log\n",
  "keep/important.log": "TODO kept by negation\n",
  ".hidden/secret.ts": "TODO hidden\n",
  ".gitignore": "build/\n*.log\n!keep/*.log\n/notes-root.txt\n",
  "sub/.gitignore": "local.ts\n",
  "sub/local.ts": "TODO ignored by nested gitignore\n",
  "sub/other.ts": "TODO in sub\n",
  "multi.txt": "start block\nmiddle\nend block\nstart again\nend\n",
};

async function corpus(w: ToolWorld): Promise<void> {
  for (const [name, text] of Object.entries(CORPUS)) {
    const path = `${w.dir}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  await Deno.writeFile(`${w.dir}/src/binary.ts`, new Uint8Array([84, 79, 68, 79, 0, 1, 2]));
}

const QUERIES: Record<string, unknown>[] = [
  { pattern: "TODO" },
  { pattern: "TODO", output_mode: "content" },
  { pattern: "todo", "-i": true, output_mode: "content", "-n": false },
  { pattern: "TODO", output_mode: "count" },
  { pattern: "TODO", output_mode: "content", "-C": 1 },
  { pattern: "TODO", output_mode: "content", "-A": 2, "-B": 1 },
  { pattern: "TODO", glob: "*.ts", output_mode: "content" },
  { pattern: "TODO", glob: "src/**/*.ts" },
  { pattern: "TODO", glob: "!*.ts" },
  { pattern: "TODO", type: "ts" },
  { pattern: "TODO", type: "md", output_mode: "content" },
  { pattern: "T[O]+D", output_mode: "content", "-o": true },
  { pattern: "start[\\s\\S]*?end", multiline: true, output_mode: "content" },
  { pattern: "caf. T", output_mode: "content" },
  { pattern: "TODO", head_limit: 3, offset: 1 },
  { pattern: "nothing-matches-this" },
];

function searchPath(w: ToolWorld, query: Record<string, unknown>): Record<string, unknown> {
  return { path: w.dir, ...query };
}

Deno.test("Grep (TypeScript search): modes, context, filters, .gitignore, hidden and binary files", async () => {
  await using w = await mountTools({ std: { grep: { ripgrep: "never" } } });
  await corpus(w);
  const grep = async (query: Record<string, unknown>) =>
    textOf(await w.call("Grep", searchPath(w, query)));
  const d = w.dir;
  assert.equal(
    await grep({ pattern: "TODO" }),
    [
      `${d}/docs/readme.md`,
      `${d}/keep/important.log`,
      `${d}/notes.txt`,
      `${d}/src/a/b.ts`,
      `${d}/src/a-b.ts`,
      `${d}/src/app.ts`,
      `${d}/src/deep/nested/mod.ts`,
      `${d}/sub/other.ts`,
      `${d}/unicode.txt`,
    ].join("\n"),
  );
  assert.equal(
    await grep({ pattern: "TODO", output_mode: "content", "-C": 1, path: `${d}/src/deep` }),
    [
      `${d}/src/deep/nested/mod.ts-2-line 2`,
      `${d}/src/deep/nested/mod.ts:3:TODO deep`,
      `${d}/src/deep/nested/mod.ts-4-line 4`,
      "--",
      `${d}/src/deep/nested/mod.ts-6-line 6`,
      `${d}/src/deep/nested/mod.ts:7:TODO again`,
      `${d}/src/deep/nested/mod.ts-8-line 8`,
    ].join("\n"),
  );
  assert.equal(
    await grep({ pattern: "TODO", output_mode: "count", glob: "src/**" }),
    [`${d}/src/a/b.ts:1`, `${d}/src/a-b.ts:1`, `${d}/src/app.ts:2`, `${d}/src/deep/nested/mod.ts:2`]
      .join("\n"),
  );
  assert.equal(
    await grep({ pattern: "start[\\s\\S]*?end", multiline: true, output_mode: "content" }),
    [
      `${d}/multi.txt:1:start block`,
      `${d}/multi.txt:2:middle`,
      `${d}/multi.txt:3:end block`,
      `${d}/multi.txt:4:start again`,
      `${d}/multi.txt:5:end`,
    ].join("\n"),
  );
  assert.equal(await grep({ pattern: "nothing-matches-this" }), "No matches found");
});

Deno.test("Grep: the error paths (bad regex, unknown type, denied path, relative path) and the line cap", async () => {
  await using w = await mountTools({ std: { grep: { ripgrep: "never", max_lines: 2 } } });
  await corpus(w);
  const grep = async (query: Record<string, unknown>) => {
    const result = await w.call("Grep", query);
    return [result.is_error, textOf(result)];
  };
  assert.deepStrictEqual(await grep({ pattern: "(" }), [
    true,
    'Tool "Grep" failed: Cannot search for "(": Invalid regular expression: /(/gu: Unterminated group',
  ]);
  assert.deepStrictEqual(
    (await grep({ pattern: "x", type: "cobol" }))[1],
    'Tool "Grep" failed: Unknown file type "cobol": ' +
      "use one of c, cpp, css, go, html, java, js, json, md, py, rb, rust, sh, sql, toml, ts, txt, yaml",
  );
  assert.deepStrictEqual(await grep({ pattern: "x", path: "/etc" }), [
    true,
    `Tool "Grep" failed: Cannot stat "/etc": outside the granted workspaces (the granted workspace is ${w.dir})`,
  ]);
  assert.deepStrictEqual(await grep({ pattern: "x", path: "src" }), [
    true,
    `Tool "Grep" failed: path must be an absolute path, got "src" (the workspace is ${w.dir})`,
  ]);
  assert.deepStrictEqual(await grep({ pattern: "TODO" }), [
    false,
    `${w.dir}/docs/readme.md\n${w.dir}/keep/important.log\n[output cut at 2 lines of 9; use offset 2 or narrow the search]`,
  ]);
});

Deno.test({
  name:
    "Grep: ripgrep and the TypeScript search give the same results for every query of the corpus",
  ignore: !hasRipgrep,
  async fn() {
    await using rg = await mountTools({ std: { grep: { ripgrep: "auto" } } });
    await using ts = await mountTools({ std: { grep: { ripgrep: "never" } } });
    await corpus(rg);
    await corpus(ts);
    for (const query of QUERIES) {
      const viaRg = textOf(await rg.call("Grep", searchPath(rg, query))).replaceAll(rg.dir, "<ws>");
      const viaTs = textOf(await ts.call("Grep", searchPath(ts, query))).replaceAll(ts.dir, "<ws>");
      assert.equal(viaRg, viaTs, `query ${JSON.stringify(query)}`);
    }
    // And ripgrep really ran: a Rust-only pattern is refused by ripgrep, not by the JavaScript parser.
    const lookbehindFree = await rg.call("Grep", { pattern: "(?<=T)ODO", path: rg.dir });
    assert.equal(lookbehindFree.is_error, true);
    assert.match(textOf(lookbehindFree), /look-?around|look-behind|not supported/i);
  },
});
