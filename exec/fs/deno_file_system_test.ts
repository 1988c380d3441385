import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { DenoFileSystem } from "./deno_file_system.ts";
import type { FsAuthorizeRequest, FsVerdict } from "./file_system.ts";
import { lstatOrUndefined, openChecked, readToEnd } from "./_leaf.ts";

interface Tree {
  root: string;
  ws: string;
  outside: string;
  [Symbol.asyncDispose](): Promise<void>;
}

async function tree(): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-fs-" }));
  const ws = `${root}/ws`;
  const outside = `${root}/outside`;
  await Deno.mkdir(`${ws}/sub`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.mkdir(`${root}/ws-evil`);
  await Deno.writeTextFile(`${outside}/canary`, "secret");
  await Deno.writeTextFile(`${root}/ws-evil/canary`, "evil");
  await Deno.writeTextFile(`${ws}/a.txt`, "alpha\nbeta\n");
  return {
    root,
    ws,
    outside,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function failure(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TerretError, `expected a TerretError, got ${error}`);
    return [error.code, error.message];
  }
  assert.fail("expected a failure");
}

Deno.test("DenoFileSystem reads, writes, edits, stats and lists inside the workspace", async () => {
  await using t = await tree();
  const fs = new DenoFileSystem({ dirs: [t.ws] });
  assert.equal(await fs.read("a.txt"), "alpha\nbeta\n");
  assert.deepStrictEqual(await fs.readBytes("a.txt", { offset: 6, length: 4 }), encode("beta"));
  assert.deepStrictEqual(await fs.write("sub/deep/new.txt", "one"), {
    path: `${t.ws}/sub/deep/new.txt`,
    bytes: 3,
    created: true,
  });
  assert.deepStrictEqual(await fs.write("sub/deep/new.txt", encode("two!")), {
    path: `${t.ws}/sub/deep/new.txt`,
    bytes: 4,
    created: false,
  });
  assert.equal(await Deno.readTextFile(`${t.ws}/sub/deep/new.txt`), "two!");
  assert.deepStrictEqual(await fs.edit("a.txt", "beta", "gamma $& $1"), {
    path: `${t.ws}/a.txt`,
    replacements: 1,
  });
  assert.equal(await Deno.readTextFile(`${t.ws}/a.txt`), "alpha\ngamma $& $1\n");
  const stat = await fs.stat("a.txt");
  assert.deepStrictEqual({ ...stat, mtime: typeof stat.mtime, mode: typeof stat.mode }, {
    path: `${t.ws}/a.txt`,
    type: "file",
    size: 18,
    mtime: "number",
    mode: "number",
  });
  assert.deepStrictEqual(await fs.list("."), {
    entries: [
      { name: "a.txt", path: `${t.ws}/a.txt`, type: "file" },
      { name: "sub", path: `${t.ws}/sub`, type: "directory" },
    ],
    truncated: false,
  });
  assert.deepStrictEqual(await fs.list(".", { limit: 1 }), {
    entries: [{ name: "a.txt", path: `${t.ws}/a.txt`, type: "file" }],
    truncated: true,
  });
});

Deno.test("DenoFileSystem.edit() requires exactly one match unless replacing all", async () => {
  await using t = await tree();
  const fs = new DenoFileSystem({ dirs: [t.ws] });
  await Deno.writeTextFile(`${t.ws}/e.txt`, "x=1; x=1; y=2");
  assert.deepStrictEqual(
    await Promise.all([
      failure(fs.edit("e.txt", "z=3", "z=4")),
      failure(fs.edit("e.txt", "x=1", "x=5")),
    ]),
    [
      ["EditAmbiguous", 'Cannot edit "e.txt": the text to replace was not found'],
      [
        "EditAmbiguous",
        'Cannot edit "e.txt": the text to replace occurs 2 times (add context to make it unique, or replace all)',
      ],
    ],
  );
  assert.equal(await Deno.readTextFile(`${t.ws}/e.txt`), "x=1; x=1; y=2");
  assert.deepStrictEqual(await fs.edit("e.txt", "x=1", "x=5", { replaceAll: true }), {
    path: `${t.ws}/e.txt`,
    replacements: 2,
  });
  assert.equal(await Deno.readTextFile(`${t.ws}/e.txt`), "x=5; x=5; y=2");
  await assert.rejects(fs.edit("e.txt", "", "a"), TypeError);
  await assert.rejects(fs.edit("e.txt", "y=2", "y=2"), {
    name: "TypeError",
    message: 'Cannot edit "e.txt": the replacement is identical to the text it replaces',
  });
});

Deno.test("DenoFileSystem caps reads and names the failure", async () => {
  await using t = await tree();
  const fs = new DenoFileSystem({ dirs: [t.ws], maxReadBytes: 8 });
  await Deno.writeFile(`${t.ws}/bin`, new Uint8Array([0xff, 0xfe, 0x00]));
  await Deno.writeTextFile(`${t.ws}/big.txt`, "0123456789");
  assert.deepStrictEqual(
    await Promise.all([
      failure(fs.read("big.txt")),
      failure(fs.edit("big.txt", "0", "1")),
      failure(fs.read("bin")),
      failure(fs.read("missing.txt")),
      failure(fs.read("sub")),
      failure(fs.list("a.txt")),
    ]),
    [
      [
        "TooLarge",
        'Cannot read "big.txt": 10 bytes is over the 8-byte read limit (read a range with offset and length)',
      ],
      ["TooLarge", 'Cannot edit "big.txt": 10 bytes is over the 8-byte limit'],
      ["NotText", 'Cannot read "bin" as text: it is not valid UTF-8'],
      ["NotFound", 'Cannot read "missing.txt": no such file or directory'],
      ["NotAFile", `Cannot read "${t.ws}/sub": it is a directory`],
      ["NotADirectory", 'Cannot list "a.txt": it is not a directory'],
    ],
  );
  assert.equal(await fs.read("big.txt", { offset: 4, length: 6 }), "456789");
  assert.equal(await fs.read("big.txt", { maxBytes: 10 }), "0123456789");
  assert.deepStrictEqual(await fs.readBytes("bin"), new Uint8Array([0xff, 0xfe, 0x00]));
  await assert.rejects(fs.read("big.txt", { offset: -1 }), RangeError);
});

Deno.test("DenoFileSystem refuses a FIFO instead of blocking on it", async () => {
  await using t = await tree();
  const fs = new DenoFileSystem({ dirs: [t.ws] });
  const made = await new Deno.Command("mkfifo", { args: [`${t.ws}/pipe`] }).output();
  assert.equal(made.code, 0);
  assert.deepStrictEqual(
    await Promise.all([failure(fs.read("pipe")), failure(fs.write("pipe", "x"))]),
    [
      ["NotAFile", `Cannot read "${t.ws}/pipe": it is not a regular file`],
      ["NotAFile", `Cannot write "${t.ws}/pipe": it is not a regular file`],
    ],
  );
});

Deno.test("every fs operation fails closed for every containment case", async () => {
  await using t = await tree();
  await Deno.symlink(`${t.outside}/canary`, `${t.ws}/link-file`);
  await Deno.symlink(t.outside, `${t.ws}/link-dir`);
  await Deno.symlink(`${t.outside}/not-yet`, `${t.ws}/dangling`);
  await Deno.symlink(`${t.ws}/loop-b`, `${t.ws}/loop-a`);
  await Deno.symlink(`${t.ws}/loop-a`, `${t.ws}/loop-b`);
  const fs = new DenoFileSystem({ dirs: [t.ws] });
  const empty = new DenoFileSystem({ dirs: [] });
  const cases: [string, string][] = [
    ["dotdot", "../outside/canary"],
    ["symlink-file", "link-file"],
    ["symlink-dir", "link-dir/canary"],
    ["dangling", "dangling"],
    ["loop", "loop-a"],
    ["sibling", `${t.root}/ws-evil/canary`],
  ];
  const ops: [string, (p: string, f: DenoFileSystem) => Promise<unknown>][] = [
    ["read", (p, f) => f.read(p)],
    ["read", (p, f) => f.readBytes(p)],
    ["write", (p, f) => f.write(p, "pwned")],
    ["edit", (p, f) => f.edit(p, "secret", "pwned")],
    ["stat", (p, f) => f.stat(p)],
    ["list", (p, f) => f.list(p)],
  ];
  const expected: Record<string, string> = {
    dotdot: `outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    "symlink-file": `outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    "symlink-dir": `outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    dangling: `outside the granted workspaces (it resolves to "${t.outside}/not-yet")`,
    loop: "more than 40 symbolic links (a loop?)",
    sibling: "outside the granted workspaces",
  };
  for (const [name, path] of cases) {
    for (const [action, op] of ops) {
      assert.deepStrictEqual(await failure(op(path, fs)), [
        "Denied",
        `Cannot ${action} "${path}": ${expected[name]}`,
      ], `${action} ${name}`);
      assert.deepStrictEqual(await failure(op(path, empty)), [
        "Denied",
        `Cannot ${action} "${path}": no workspace is granted`,
      ], `${action} ${name} (empty workspace)`);
    }
  }
  assert.deepStrictEqual(await failure(fs.glob("../outside/*")), [
    "Denied",
    `Cannot glob "../outside": outside the granted workspaces (it resolves to "${t.outside}")`,
  ]);
  assert.deepStrictEqual(await failure(empty.glob("*")), [
    "Denied",
    'Cannot glob ".": no workspace is granted',
  ]);
  // Nothing outside was touched, and the dangling link's target was not created.
  assert.equal(await Deno.readTextFile(`${t.outside}/canary`), "secret");
  assert.equal(await Deno.readTextFile(`${t.root}/ws-evil/canary`), "evil");
  assert.equal(await lstatOrUndefined(`${t.outside}/not-yet`), undefined);
  assert.deepStrictEqual((await Array.fromAsync(Deno.readDir(t.outside))).map((e) => e.name), [
    "canary",
  ]);
});

Deno.test("a dangling link inside the workspace is written at its real target", async () => {
  await using t = await tree();
  await Deno.symlink(`${t.ws}/sub/later.txt`, `${t.ws}/soon`);
  const fs = new DenoFileSystem({ dirs: [t.ws] });
  assert.deepStrictEqual(await fs.write("soon", "hi"), {
    path: `${t.ws}/sub/later.txt`,
    bytes: 2,
    created: true,
  });
  assert.equal(await Deno.readTextFile(`${t.ws}/sub/later.txt`), "hi");
  assert.equal((await Deno.lstat(`${t.ws}/soon`)).isSymlink, true);
});

Deno.test("a link swapped in after the containment check is not followed", async () => {
  await using t = await tree();
  // The authorize step runs between containment and the open: it plays the attacker, swapping the checked file
  // for a link leading out.
  const fs = new DenoFileSystem({
    dirs: [t.ws],
    authorize: async (): Promise<FsVerdict> => {
      await Deno.remove(`${t.ws}/a.txt`);
      await Deno.symlink(`${t.outside}/canary`, `${t.ws}/a.txt`);
      return { allow: true };
    },
  });
  const attempts: [string, () => Promise<unknown>][] = [
    ["read", () => fs.read("a.txt")],
    ["write", () => fs.write("a.txt", "pwned")],
    ["edit", () => fs.edit("a.txt", "secret", "pwned")],
  ];
  for (const [action, attempt] of attempts) {
    await Deno.remove(`${t.ws}/a.txt`);
    await Deno.writeTextFile(`${t.ws}/a.txt`, "secret");
    assert.deepStrictEqual(await failure(attempt()), [
      "Denied",
      `Cannot ${action} "${t.ws}/a.txt": it became a symbolic link after the containment check`,
    ]);
  }
  assert.equal(await Deno.readTextFile(`${t.outside}/canary`), "secret");
});

Deno.test("openChecked() refuses a handle whose identity changed after the lstat", async () => {
  await using t = await tree();
  const path = `${t.ws}/a.txt`;
  const before = (await lstatOrUndefined(path))!;
  // Swapped between the lstat and the open: a link (followed by open) and a different regular file. The file lstat
  // saw is moved aside, not removed, so no file made later can be given its inode number (file systems reuse freed
  // ones, and a file that got it would be the same file to the check).
  await Deno.rename(path, `${t.ws}/moved-aside`);
  await Deno.symlink(`${t.outside}/canary`, path);
  const message = `Cannot write "${path}": the file changed while it was being opened`;
  assert.deepStrictEqual(await failure(openChecked(path, before, { write: true }, "write")), [
    "Denied",
    message,
  ]);
  await Deno.writeTextFile(`${t.ws}/other`, "x");
  await Deno.remove(path);
  await Deno.rename(`${t.ws}/other`, path);
  assert.deepStrictEqual(await failure(openChecked(path, before, { write: true }, "write")), [
    "Denied",
    message,
  ]);
  assert.equal(await Deno.readTextFile(`${t.outside}/canary`), "secret");
});

Deno.test("DenoFileSystem asks authorize for every admitted operation, after containment", async () => {
  await using t = await tree();
  const seen: FsAuthorizeRequest[] = [];
  const fs = new DenoFileSystem({
    dirs: [t.ws],
    authorize: (request) => {
      seen.push(request);
      if (request.path.endsWith(".env")) return { allow: false, reason: "secrets stay put" };
      if (request.path.endsWith("boom")) throw new Error("listener crashed");
      return { allow: true };
    },
  });
  await Deno.writeTextFile(`${t.ws}/.env`, "KEY=1");
  await fs.read("a.txt");
  await fs.write("b.txt", "b");
  await fs.edit("b.txt", "b", "c");
  await fs.stat("sub");
  await fs.list("sub");
  await fs.glob("*.txt");
  assert.deepStrictEqual(
    [
      await failure(fs.read(".env")),
      await failure(fs.write("boom", "x")),
      await failure(fs.read("../outside/canary")),
    ],
    [
      ["Denied", 'Cannot read ".env": vetoed by policy (secrets stay put)'],
      ["Denied", 'Cannot write "boom": the fs/authorize check failed (listener crashed)'],
      [
        "Denied",
        `Cannot read "../outside/canary": outside the granted workspaces (it resolves to "${t.outside}/canary")`,
      ],
    ],
  );
  assert.deepStrictEqual(seen, [
    { op: "read", path: `${t.ws}/a.txt` },
    { op: "write", path: `${t.ws}/b.txt` },
    { op: "edit", path: `${t.ws}/b.txt` },
    { op: "stat", path: `${t.ws}/sub` },
    { op: "list", path: `${t.ws}/sub` },
    { op: "glob", path: t.ws },
    { op: "read", path: `${t.ws}/.env` },
    { op: "write", path: `${t.ws}/boom` },
  ]);
  assert.equal(await lstatOrUndefined(`${t.ws}/boom`), undefined);
});

Deno.test("DenoFileSystem treats any verdict but {allow: true} as a veto", async () => {
  await using t = await tree();
  const verdicts: unknown[] = [undefined, true, { allow: "yes" }, null];
  for (const verdict of verdicts) {
    const fs = new DenoFileSystem({ dirs: [t.ws], authorize: () => verdict as FsVerdict });
    assert.deepStrictEqual(await failure(fs.read("a.txt")), [
      "Denied",
      'Cannot read "a.txt": vetoed by policy',
    ]);
  }
});

Deno.test("readToEnd() reads a file that grew past its fstat size, and stops just past the limit", async () => {
  await using t = await tree();
  await Deno.writeTextFile(`${t.ws}/grown`, "0123456789");
  const read = async (expected: number, limit: number) => {
    using file = await Deno.open(`${t.ws}/grown`);
    return new TextDecoder().decode(await readToEnd(file, expected, limit));
  };
  assert.deepStrictEqual(
    [await read(2, 100), await read(10, 5), await read(0, 10), await read(10, 10)],
    ["0123456789", "012345", "0123456789", "0123456789"],
  );
});

function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
