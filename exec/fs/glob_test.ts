import assert from "node:assert/strict";
import { compileGlob, splitGlob } from "./glob.ts";
import { DenoFileSystem } from "./deno_file_system.ts";

Deno.test("splitGlob() separates the literal base from the pattern", () => {
  assert.deepStrictEqual(
    ["src/**/*.ts", "/abs/dir/*.md", "*.txt", "/*", "a/b/c.txt", "{a,b}/x"].map(splitGlob),
    [
      { base: "src", segments: ["**", "*.ts"] },
      { base: "/abs/dir", segments: ["*.md"] },
      { base: "", segments: ["*.txt"] },
      { base: "/", segments: ["*"] },
      { base: "a/b/c.txt", segments: [] },
      { base: "", segments: ["{a,b}", "x"] },
    ],
  );
});

Deno.test("compileGlob() matches segments, globstars, classes and alternatives", () => {
  const cases: [string, string, boolean][] = [
    ["*.ts", "a.ts", true],
    ["*.ts", "dir/a.ts", false],
    ["*.ts", ".hidden.ts", false],
    ["**/*.ts", "a.ts", true],
    ["**/*.ts", "x/y/z/a.ts", true],
    ["**/*.ts", ".git/a.ts", false],
    ["**", "x/y", true],
    ["x/**", "x/y/z", true],
    ["a?c", "abc", true],
    ["a?c", "a/c", false],
    ["[ab]*", "bz", true],
    ["[!ab]*", "bz", false],
    ["[!ab]*", "cz", true],
    ["*.{ts,md}", "r.md", true],
    ["*.{ts,md}", "r.js", false],
    ["{src,lib}/**/*.ts", "lib/a/b.ts", true],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["(x).+*", "(x).+y", true],
    ["(x).+*", "x.y", false],
    [".env*", ".env.local", true],
  ];
  assert.deepStrictEqual(
    cases.map(([pattern, path]) => compileGlob(splitGlob(pattern).segments).test(path)),
    cases.map(([, , expected]) => expected),
  );
  assert.equal(compileGlob(["**", "*.ts"], { dot: true }).test(".git/a.ts"), true);
  assert.throws(() => compileGlob(["[ab"]), TypeError);
  assert.throws(() => compileGlob(["{a,b"]), TypeError);
});

Deno.test("DenoFileSystem.glob() walks sorted, keeps links inside and drops the ones that fail", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-glob-" }));
  try {
    const ws = `${root}/ws`;
    await Deno.mkdir(`${ws}/src/deep`, { recursive: true });
    await Deno.mkdir(`${ws}/.git`);
    await Deno.mkdir(`${root}/outside`);
    for (const file of ["src/b.ts", "src/a.ts", "src/deep/c.ts", "README.md", ".git/x.ts"]) {
      await Deno.writeTextFile(`${ws}/${file}`, "");
    }
    await Deno.writeTextFile(`${root}/outside/secret.ts`, "");
    await Deno.symlink(`${ws}/src/a.ts`, `${ws}/src/inside-link.ts`);
    await Deno.symlink(`${root}/outside/secret.ts`, `${ws}/src/out-link.ts`);
    await Deno.symlink(`${ws}/src/nothing.ts`, `${ws}/src/dangling.ts`);
    await Deno.symlink(`${ws}/src/loop2.ts`, `${ws}/src/loop1.ts`);
    await Deno.symlink(`${ws}/src/loop1.ts`, `${ws}/src/loop2.ts`);
    await Deno.symlink(`${root}/outside`, `${ws}/src/out-dir`);
    const fs = new DenoFileSystem({ dirs: [ws] });
    assert.deepStrictEqual(await fs.glob("**/*.ts"), {
      paths: [
        `${ws}/src/a.ts`,
        `${ws}/src/b.ts`,
        `${ws}/src/deep/c.ts`,
        `${ws}/src/inside-link.ts`,
      ],
      truncated: false,
    });
    assert.deepStrictEqual(await fs.glob("**/*.ts", { dot: true, limit: 2 }), {
      paths: [`${ws}/.git/x.ts`, `${ws}/src/a.ts`],
      truncated: true,
    });
    assert.deepStrictEqual(await fs.glob("src/*", { includeDirectories: true }), {
      paths: [`${ws}/src/a.ts`, `${ws}/src/b.ts`, `${ws}/src/deep`, `${ws}/src/inside-link.ts`],
      truncated: false,
    });
    assert.deepStrictEqual(await fs.glob(`${ws}/README.md`), {
      paths: [`${ws}/README.md`],
      truncated: false,
    });
    assert.deepStrictEqual(await fs.glob("*.{md,txt}", { cwd: ws }), {
      paths: [`${ws}/README.md`],
      truncated: false,
    });
    assert.deepStrictEqual(await fs.glob("nope/**"), { paths: [], truncated: false });
    const bounded = new DenoFileSystem({ dirs: [ws], maxGlobVisits: 3 });
    // .git (pruned), README.md, src, then the fourth visit stops the walk.
    assert.deepStrictEqual(await bounded.glob("**/*.md"), {
      paths: [`${ws}/README.md`],
      truncated: true,
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
