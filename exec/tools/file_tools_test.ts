import assert from "node:assert/strict";
import { mountTools, textOf } from "./_testing.ts";

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("Read: numbered lines, a window with offset and limit, and the note naming the next offset", async () => {
  await using w = await mountTools({ std: { read: { default_lines: 3 } } });
  await Deno.writeTextFile(`${w.dir}/a.txt`, "one\ntwo\nthree\nfour\nfive\n");
  assert.deepStrictEqual(await w.call("Read", { file_path: `${w.dir}/a.txt` }), {
    id: "call-1",
    name: "Read",
    content:
      "     1\tone\n     2\ttwo\n     3\tthree\n\n[more lines follow: call Read with offset 4 to continue]",
    is_error: false,
  });
  assert.equal(
    textOf(await w.call("Read", { file_path: `${w.dir}/a.txt`, offset: 4, limit: 5 })),
    "     4\tfour\n     5\tfive",
  );
  assert.equal(
    textOf(await w.call("Read", { file_path: `${w.dir}/a.txt`, offset: 2, limit: 1 })),
    "     2\ttwo\n\n[more lines follow: call Read with offset 3 to continue]",
  );
  assert.equal(
    textOf(await w.call("Read", { file_path: `${w.dir}/a.txt`, allow_large: true })),
    "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive",
  );
});

Deno.test("Read: long lines are cut, a last line without newline counts, lines cross chunk boundaries", async () => {
  await using w = await mountTools({ std: { read: { max_line_chars: 10 } } });
  const long = "x".repeat(300_000);
  await Deno.writeTextFile(`${w.dir}/long.txt`, `short\n${long}\nü€😀 end`);
  assert.equal(
    textOf(await w.call("Read", { file_path: `${w.dir}/long.txt` })),
    "     1\tshort\n     2\txxxxxxxxxx… [line cut at 10 characters]\n     3\tü€😀 end",
  );
});

Deno.test("Read: the error paths a model hits", async () => {
  await using w = await mountTools();
  await Deno.mkdir(`${w.dir}/sub`);
  await Deno.writeTextFile(`${w.dir}/empty.txt`, "");
  await Deno.writeTextFile(`${w.dir}/two.txt`, "a\nb\n");
  await Deno.writeFile(`${w.dir}/bin.dat`, new Uint8Array([1, 2, 0, 3]));
  const read = async (args: Record<string, unknown>) => {
    const result = await w.call("Read", args);
    return [result.is_error, textOf(result)];
  };
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/missing.txt` }), [
    true,
    `Tool "Read" failed: Cannot stat "${w.dir}/missing.txt": no such file or directory`,
  ]);
  assert.deepStrictEqual(await read({ file_path: "/etc/passwd" }), [
    true,
    `Tool "Read" failed: Cannot stat "/etc/passwd": outside the granted workspaces (the granted workspace is ${w.dir})`,
  ]);
  assert.deepStrictEqual(await read({ file_path: "two.txt" }), [
    true,
    `Tool "Read" failed: file_path must be an absolute path, got "two.txt" (the workspace is ${w.dir})`,
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/sub` }), [
    true,
    `Tool "Read" failed: Cannot read "${w.dir}/sub": it is a directory (use Glob to list it)`,
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/bin.dat` }), [
    true,
    `Tool "Read" failed: Cannot read "${w.dir}/bin.dat": it is a binary file (4 bytes); Read shows text files and images`,
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/empty.txt` }), [
    false,
    `The file ${w.dir}/empty.txt exists but is empty.`,
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/two.txt`, offset: 5 }), [
    true,
    `Cannot read "${w.dir}/two.txt" from line 5: the file has 2 lines`,
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/two.txt`, pages: "1-2" }), [
    true,
    'Tool "Read" failed: Cannot read pages "1-2": PDF reading is not supported',
  ]);
  assert.deepStrictEqual(await read({ file_path: `${w.dir}/two.txt`, lines: 3 }), [
    true,
    'Invalid arguments for tool "Read": (arguments): Unrecognized key: "lines". Call the tool again with ' +
    "arguments matching its schema.",
  ]);
});

Deno.test("Read: an image comes back as a text part and an image part", async () => {
  await using w = await mountTools();
  await Deno.writeFile(`${w.dir}/dot.png`, PNG);
  const result = await w.call("Read", { file_path: `${w.dir}/dot.png` });
  assert.deepStrictEqual(result.content, [
    { type: "text", text: `Image ${w.dir}/dot.png (image/png, ${PNG.length} bytes)` },
    { type: "image", media_type: "image/png", data: btoa(String.fromCharCode(...PNG)) },
  ]);
});

Deno.test("Write: creates (with parents) and replaces; refuses outside the workspace", async () => {
  await using w = await mountTools();
  assert.equal(
    textOf(await w.call("Write", { file_path: `${w.dir}/new/dir/f.txt`, content: "héllo" })),
    `Created ${w.dir}/new/dir/f.txt (6 bytes)`,
  );
  assert.equal(
    textOf(await w.call("Write", { file_path: `${w.dir}/new/dir/f.txt`, content: "x" })),
    `Replaced ${w.dir}/new/dir/f.txt (1 byte)`,
  );
  assert.equal(await Deno.readTextFile(`${w.dir}/new/dir/f.txt`), "x");
  const outside = await w.call("Write", { file_path: `${w.dir}/../escape.txt`, content: "x" });
  assert.deepStrictEqual([outside.is_error, textOf(outside)], [
    true,
    `Tool "Write" failed: Cannot write "${w.dir}/../escape.txt": outside the granted workspaces (it resolves to ` +
    `"${w.dir.replace(/\/[^/]+$/, "")}/escape.txt") (the granted workspace is ${w.dir})`,
  ]);
});

Deno.test("Edit: unique replacement, replace_all, and the ambiguous, missing and identical cases", async () => {
  await using w = await mountTools();
  const file = `${w.dir}/e.txt`;
  await Deno.writeTextFile(file, "a = 1\nb = 1\nc = 2\n");
  const edit = async (args: Record<string, unknown>) => {
    const result = await w.call("Edit", { file_path: file, ...args });
    return [result.is_error, textOf(result)];
  };
  assert.deepStrictEqual(await edit({ old_string: "c = 2", new_string: "c = 3" }), [
    false,
    `Replaced 1 occurrence in ${file}`,
  ]);
  assert.deepStrictEqual(await edit({ old_string: "= 1", new_string: "= 9" }), [
    true,
    `Tool "Edit" failed: Cannot edit "${file}": old_string occurs 2 times; include more surrounding text to make ` +
    "it unique, or set replace_all to true",
  ]);
  assert.deepStrictEqual(await edit({ old_string: "zzz", new_string: "y" }), [
    true,
    `Tool "Edit" failed: Cannot edit "${file}": old_string was not found in the file (read the file again and ` +
    "copy the text exactly, including whitespace)",
  ]);
  assert.deepStrictEqual(await edit({ old_string: "a", new_string: "a" }), [
    true,
    'Tool "Edit" failed: new_string must differ from old_string: nothing would change',
  ]);
  assert.deepStrictEqual(await edit({ old_string: "= 1", new_string: "= 9", replace_all: true }), [
    false,
    `Replaced 2 occurrences in ${file}`,
  ]);
  assert.equal(await Deno.readTextFile(file), "a = 9\nb = 9\nc = 3\n");
  const missing = await w.call("Edit", {
    file_path: `${w.dir}/nope.txt`,
    old_string: "a",
    new_string: "b",
  });
  assert.deepStrictEqual(
    textOf(missing),
    `Tool "Edit" failed: Cannot edit "${w.dir}/nope.txt": no such file or directory`,
  );
});

Deno.test("Glob: sorted absolute paths, a path argument, no match, denied path", async () => {
  await using w = await mountTools();
  for (const name of ["src/b.ts", "src/a.ts", "src/deep/c.ts", "src/d.js", ".hidden/e.ts"]) {
    await Deno.mkdir(`${w.dir}/${name.split("/").slice(0, -1).join("/")}`, { recursive: true });
    await Deno.writeTextFile(`${w.dir}/${name}`, "x");
  }
  assert.equal(
    textOf(await w.call("Glob", { pattern: "**/*.ts" })),
    [`${w.dir}/src/a.ts`, `${w.dir}/src/b.ts`, `${w.dir}/src/deep/c.ts`].join("\n"),
  );
  assert.equal(
    textOf(await w.call("Glob", { pattern: "*.{js,ts}", path: `${w.dir}/src` })),
    [`${w.dir}/src/a.ts`, `${w.dir}/src/b.ts`, `${w.dir}/src/d.js`].join("\n"),
  );
  assert.equal(textOf(await w.call("Glob", { pattern: "*.py" })), "No files found");
  const denied = await w.call("Glob", { pattern: "*", path: "/etc" });
  assert.deepStrictEqual([denied.is_error, textOf(denied)], [
    true,
    `Tool "Glob" failed: Cannot glob ".": outside the granted workspaces (it resolves to "/etc") (the granted ` +
    `workspace is ${w.dir})`,
  ]);
});
