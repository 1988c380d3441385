import assert from "node:assert/strict";
import { createContext, Loader, parseConfig, pluginPermissions, TerretError } from "@terret/hames";
import { WorkspaceKey } from "@terret/core";
import { workspacePlugin } from "../workspace.ts";
import { FsAuthorize, type FsAuthorizeRequest, FsKey } from "./file_system.ts";
import { fsPlugin } from "./fs_plugin.ts";

Deno.test("the fs row contains to the workspace row and dispatches fs/authorize", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-fsrow-" }));
  try {
    await Deno.mkdir(`${root}/ws`);
    await Deno.mkdir(`${root}/elsewhere`);
    await using ctx = createContext({ mode: "test" });
    const seen: FsAuthorizeRequest[] = [];
    ctx.on(FsAuthorize, (request, next) => {
      seen.push(request);
      if (request.path.endsWith("/secret.txt")) return { allow: false, reason: "no secrets" };
      // A listener that tries to redirect: the rewritten path is ignored.
      return next({ op: request.op, path: `${root}/elsewhere/redirected.txt` });
    });
    const loader = new Loader(ctx);
    await loader.load([
      { id: "fs", plugin: fsPlugin, config: { max_read_bytes: 64 } },
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [`${root}/ws`] } },
    ]);
    const fs = ctx.get(FsKey);
    assert.deepStrictEqual(fs.dirs, [`${root}/ws`]);
    assert.deepStrictEqual(await fs.write("note.txt", "hello"), {
      path: `${root}/ws/note.txt`,
      bytes: 5,
      created: true,
    });
    await assert.rejects(fs.write("secret.txt", "x"), (error: unknown) => {
      assert.ok(error instanceof TerretError);
      assert.deepStrictEqual([error.code, error.message], [
        "Denied",
        'Cannot write "secret.txt": vetoed by policy (no secrets)',
      ]);
      return true;
    });
    await assert.rejects(fs.read("../elsewhere/x"), { code: "Denied" });
    await Deno.writeTextFile(`${root}/ws/big.txt`, "x".repeat(65));
    await assert.rejects(fs.read("big.txt"), { code: "TooLarge" });
    assert.deepStrictEqual(seen, [
      { op: "write", path: `${root}/ws/note.txt` },
      { op: "write", path: `${root}/ws/secret.txt` },
      { op: "read", path: `${root}/ws/big.txt` },
    ]);
    assert.deepStrictEqual(
      (await Array.fromAsync(Deno.readDir(`${root}/ws`))).map((e) => e.name).sort(),
      ["big.txt", "note.txt"],
    );
    assert.deepStrictEqual(await Array.fromAsync(Deno.readDir(`${root}/elsewhere`)), []);
    await loader.fiber("workspace")!.dispose();
    assert.equal(ctx.has(FsKey), false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the fs row asks to read and write exactly the directories the workspace row grants", () => {
  const config = parseConfig(fsPlugin, {}, "fs");
  const under = (plugin: string, rowConfig: unknown) =>
    pluginPermissions(fsPlugin, config, {
      provider: (key) => key === WorkspaceKey ? { plugin, config: rowConfig } : undefined,
    });
  assert.deepStrictEqual(under("workspace", { dirs: ["~/w", "/srv/a"] }), {
    read: ["~/w", "/srv/a"],
    write: ["~/w", "/srv/a"],
    env: ["HOME"],
  });
  // A workspace provider it does not know: it cannot tell the directories, so it asks for the categories.
  assert.deepStrictEqual(under("my-workspace", {}), { read: true, write: true, env: ["HOME"] });
  assert.deepStrictEqual(pluginPermissions(fsPlugin, config), {
    read: [],
    write: [],
    env: ["HOME"],
  });
});
