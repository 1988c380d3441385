import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { containPath, resolveReal } from "./containment.ts";

interface Tree {
  root: string;
  ws: string;
  outside: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** root/ws (granted), root/outside (with a canary), root/ws-evil (a sibling sharing the prefix). */
async function tree(): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-contain-" }));
  const ws = `${root}/ws`;
  const outside = `${root}/outside`;
  await Deno.mkdir(`${ws}/sub`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.mkdir(`${root}/ws-evil`);
  await Deno.writeTextFile(`${outside}/canary`, "secret");
  await Deno.writeTextFile(`${ws}/a.txt`, "a");
  return {
    root,
    ws,
    outside,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function denied(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TerretError, `expected a TerretError, got ${error}`);
    assert.equal(error.code, "Denied");
    return error.message;
  }
  assert.fail("expected Denied");
}

Deno.test("resolveReal() follows links like the kernel, including a dangling leaf", async () => {
  await using t = await tree();
  await Deno.symlink(t.outside, `${t.ws}/out`);
  await Deno.symlink("sub", `${t.ws}/rel`);
  await Deno.symlink(`${t.outside}/not-yet`, `${t.ws}/dangling`);
  await Deno.symlink("../../outside", `${t.ws}/sub/up`);
  assert.deepStrictEqual(
    await Promise.all([
      resolveReal(`${t.ws}/a.txt`),
      resolveReal(`${t.ws}/out/canary`),
      resolveReal(`${t.ws}/rel/x/y`),
      resolveReal(`${t.ws}/dangling`),
      resolveReal(`${t.ws}/out/..`), // `..` applies to the link's real target, not lexically
      resolveReal(`${t.ws}/missing/../out/canary`), // `..` past a missing component climbs into a link
      resolveReal(`${t.ws}/sub/up/canary`),
      resolveReal(`${t.ws}/a.txt/x`),
    ]),
    [
      `${t.ws}/a.txt`,
      `${t.outside}/canary`,
      `${t.ws}/sub/x/y`,
      `${t.outside}/not-yet`,
      t.root,
      `${t.outside}/canary`,
      `${t.outside}/canary`,
      `${t.ws}/a.txt/x`,
    ],
  );
});

Deno.test("resolveReal() caps symlink hops: a loop is Denied, never a stack overflow", async () => {
  await using t = await tree();
  await Deno.symlink(`${t.ws}/b`, `${t.ws}/a`);
  await Deno.symlink(`${t.ws}/a`, `${t.ws}/b`);
  await Deno.symlink("self", `${t.ws}/self`);
  // A chain of 41 links: one over the default cap of 40; the 40-link suffix of it resolves.
  await Deno.writeTextFile(`${t.ws}/end`, "");
  for (let i = 0; i < 41; i++) {
    await Deno.symlink(i === 0 ? `${t.ws}/end` : `${t.ws}/chain${i - 1}`, `${t.ws}/chain${i}`);
  }
  assert.equal(
    await denied(resolveReal(`${t.ws}/a`)),
    `Cannot resolve "${t.ws}/a": more than 40 symbolic links (a loop?)`,
  );
  assert.equal(
    await denied(resolveReal(`${t.ws}/self/x`)),
    `Cannot resolve "${t.ws}/self/x": more than 40 symbolic links (a loop?)`,
  );
  assert.equal(await resolveReal(`${t.ws}/chain39`), `${t.ws}/end`);
  await denied(resolveReal(`${t.ws}/chain40`));
  assert.equal(await resolveReal(`${t.ws}/chain40`, { maxHops: 41 }), `${t.ws}/end`);
  await assert.rejects(resolveReal("relative/path"), TypeError);
});

Deno.test("containPath() admits real paths inside a granted directory and nothing else", async () => {
  await using t = await tree();
  await Deno.symlink(t.outside, `${t.ws}/out`);
  await Deno.symlink(`${t.outside}/not-yet`, `${t.ws}/dangling-out`);
  await Deno.symlink(`${t.ws}/later`, `${t.ws}/dangling-in`);
  const dirs = [t.ws];
  assert.equal(await containPath("a.txt", dirs), `${t.ws}/a.txt`);
  assert.equal(await containPath("sub/new/file", dirs), `${t.ws}/sub/new/file`);
  assert.equal(await containPath(`${t.ws}/dangling-in`, dirs), `${t.ws}/later`);
  assert.equal(await containPath("x", dirs, { cwd: `${t.ws}/sub` }), `${t.ws}/sub/x`);
  assert.equal(await containPath(t.ws, dirs), t.ws);
  const messages = await Promise.all([
    denied(containPath("../outside/canary", dirs, { action: "read" })),
    denied(containPath(`${t.ws}/sub/../../outside/canary`, dirs, { action: "read" })),
    denied(containPath("out/canary", dirs, { action: "read" })),
    denied(containPath("dangling-out", dirs, { action: "write" })),
    denied(containPath(`${t.root}/ws-evil/x`, dirs, { action: "read" })),
    denied(containPath("a.txt", [], { action: "read" })),
  ]);
  assert.deepStrictEqual(messages, [
    `Cannot read "../outside/canary": outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    `Cannot read "${t.ws}/sub/../../outside/canary": outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    `Cannot read "out/canary": outside the granted workspaces (it resolves to "${t.outside}/canary")`,
    `Cannot write "dangling-out": outside the granted workspaces (it resolves to "${t.outside}/not-yet")`,
    `Cannot read "${t.root}/ws-evil/x": outside the granted workspaces`,
    `Cannot read "a.txt": no workspace is granted`,
  ]);
  await assert.rejects(containPath("", dirs), TypeError);
  await assert.rejects(containPath("a\0b", dirs), TypeError);
  await assert.rejects(containPath("a", dirs, { cwd: "relative" }), TypeError);
});

Deno.test("containPath() turns a link loop into Denied naming the path", async () => {
  await using t = await tree();
  await Deno.symlink(`${t.ws}/b`, `${t.ws}/a`);
  await Deno.symlink(`${t.ws}/a`, `${t.ws}/b`);
  assert.equal(
    await denied(containPath("a", [t.ws], { action: "read", maxHops: 8 })),
    `Cannot read "a": more than 8 symbolic links (a loop?)`,
  );
});
