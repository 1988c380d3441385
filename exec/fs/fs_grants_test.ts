import assert from "node:assert/strict";
import { createContext, Loader } from "@terret/hames";
import { workspacePlugin } from "../workspace.ts";
import { FsKey } from "./file_system.ts";
import { FsGrantsKey } from "./fs_grants.ts";
import { fsPlugin } from "./fs_plugin.ts";

Deno.test("a read-only grant admits reads, stat, list and glob, refuses writes and edits, and ends with its owner", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-fsgrant-" }));
  try {
    await Deno.mkdir(`${root}/ws`);
    await Deno.mkdir(`${root}/jobs`);
    await Deno.mkdir(`${root}/other`);
    await Deno.writeTextFile(`${root}/jobs/1.log`, "line\n");
    await Deno.writeTextFile(`${root}/other/x.txt`, "x");
    await Deno.symlink(`${root}/other/x.txt`, `${root}/jobs/escape.log`);
    await using ctx = createContext({ mode: "test" });
    await new Loader(ctx).load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [`${root}/ws`] } },
      { id: "fs", plugin: fsPlugin, config: {} },
    ]);
    const fs = ctx.get(FsKey);
    const owner = ctx.scope("jobs");
    ctx.get(FsGrantsKey).grantReadOnly(owner, `${root}/jobs`);
    assert.deepStrictEqual(ctx.get(FsGrantsKey).readOnlyDirs, [`${root}/jobs`]);
    assert.equal(await fs.read(`${root}/jobs/1.log`), "line\n");
    assert.equal((await fs.stat(`${root}/jobs/1.log`)).size, 5);
    assert.deepStrictEqual((await fs.list(`${root}/jobs`)).entries.map((e) => e.name), [
      "1.log",
      "escape.log",
    ]);
    // The link leading out of the grant is dropped, as for the workspace.
    assert.deepStrictEqual((await fs.glob(`${root}/jobs/*.log`)).paths, [`${root}/jobs/1.log`]);
    await assert.rejects(fs.read(`${root}/jobs/escape.log`), {
      name: "TerretError",
      code: "Denied",
      message:
        `Cannot read "${root}/jobs/escape.log": outside the granted workspaces (it resolves to "${root}/other/x.txt")`,
    });
    await assert.rejects(fs.write(`${root}/jobs/1.log`, "overwritten"), {
      name: "TerretError",
      code: "Denied",
      message: `Cannot write "${root}/jobs/1.log": it is in a read-only directory (${root}/jobs)`,
    });
    await assert.rejects(fs.edit(`${root}/jobs/1.log`, "line", "edited"), {
      name: "TerretError",
      code: "Denied",
      message: `Cannot edit "${root}/jobs/1.log": it is in a read-only directory (${root}/jobs)`,
    });
    await assert.rejects(fs.write(`${root}/jobs/new.log`, "x"), { code: "Denied" });
    assert.equal(await Deno.readTextFile(`${root}/jobs/1.log`), "line\n");
    await assert.rejects(Deno.stat(`${root}/jobs/new.log`), Deno.errors.NotFound);
    await owner.dispose();
    assert.deepStrictEqual(ctx.get(FsGrantsKey).readOnlyDirs, []);
    await assert.rejects(fs.read(`${root}/jobs/1.log`), {
      code: "Denied",
      message: `Cannot read "${root}/jobs/1.log": outside the granted workspaces`,
    });
    await assert.rejects(fs.write(`${root}/jobs/1.log`, "x"), {
      code: "Denied",
      message: `Cannot write "${root}/jobs/1.log": outside the granted workspaces`,
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("grantReadOnly() refuses a relative directory", async () => {
  await using ctx = createContext({ mode: "test" });
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-fsgrant-" }));
  try {
    await new Loader(ctx).load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [root] } },
      { id: "fs", plugin: fsPlugin, config: {} },
    ]);
    assert.throws(() => ctx.get(FsGrantsKey).grantReadOnly(ctx, "jobs"), {
      name: "TypeError",
      message: 'Cannot grant read of "jobs": the directory must be an absolute real path',
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
