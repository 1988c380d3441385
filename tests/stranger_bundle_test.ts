/**
 * The extension story end to end: a stranger package, built on disk here, declares a terret bundle in its package
 * metadata; a profile lists it by name; it is discovered, composed, booted, its tool run, and denied until the allow
 * list names it.
 *
 * Until the real tool registry and allow list land, the `tools` service and the `tools.allow` row come from the
 * stand-in bundle `tests/fixtures/composition/bundles/stand-in-tools.yml` (same service key `tools`, same fixed row
 * id `tools.allow`, same deny-by-default glob floor). When they land, list `base` instead of `stand-in-tools` in
 * PROFILE, drop `bundleDirs`, and call the real registry's execute; the stranger package needs no change.
 */
import assert from "node:assert/strict";
import { isTerretError } from "@terret/hames";
import { runTrt } from "@terret/cli";
import { bootProfile, resolveProfile } from "@terret/terret";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "./fixtures/composition/tree.ts";
import { Tools } from "./fixtures/composition/plugins/stand_in_tools.ts";

const FORTUNE_JS = `
// A third-party plugin: plain JavaScript, no dependency on Terret's packages at all. It asks for the tool
// registry by its service key and registers one tool, owned by this plugin (it dies with the row).
const Tools = Object.freeze({ key: "tools", description: "Tool registry" });
export const fortune = {
  name: "terret-fortune",
  description: "Tells a fortune",
  inject: [Tools],
  apply(ctx, config) {
    const tools = ctx.get(Tools);
    ctx.effect(() => tools.register({ name: "fortune", execute: () => config.fortunes[0] }), "tool fortune");
  },
};
`;

const STRANGER = {
  "project/node_modules/terret-fortune/package.json": JSON.stringify({
    name: "terret-fortune",
    version: "1.0.0",
    type: "module",
    terret: { bundle: "terret/bundle.yml" },
  }),
  "project/node_modules/terret-fortune/terret/bundle.yml": `name: fortune
plugins:
  terret-fortune: ../fortune.js#fortune
rows:
  - id: tools.fortune
    plugin: terret-fortune
    config:
      fortunes: ["You will ship it."]
`,
  "project/node_modules/terret-fortune/fortune.js": FORTUNE_JS,
  "home/profiles/fortune/profile.yml": "bundles:\n  - stand-in-tools\n  - terret-fortune\n",
  "allow.yml": "rows:\n  - id: tools.allow\n    config: { allow: [fort*] }\n",
};

Deno.test("a stranger bundle package is discovered from its metadata, composed, booted, run, and denied until allowed", async () => {
  await using tree = await writeTree(STRANGER);
  const options = {
    home: tree.path("home"),
    cwd: tree.path("project"),
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
    context: { mode: "test" as const },
  };
  const resolved = await resolveProfile("fortune", options);
  const bundle = tree.path("project/node_modules/terret-fortune/terret/bundle.yml");
  assert.deepStrictEqual(resolved.layers.map((layer) => [layer.name, layer.file]), [
    ["bundle stand-in-tools", new URL("stand-in-tools.yml", FIXTURE_BUNDLES).pathname],
    ["bundle terret-fortune", bundle],
  ]);
  assert.deepStrictEqual(resolved.plugins.get("terret-fortune"), {
    name: "terret-fortune",
    declaredBy: `bundle terret-fortune (${bundle})`,
    specifier: "../fortune.js#fortune",
    module: `file://${tree.path("project/node_modules/terret-fortune/fortune.js")}`,
    exportName: "fortune",
    readScope: tree.path("project/node_modules/terret-fortune"),
  });

  {
    await using terret = await bootProfile("fortune", options);
    const tools = terret.ctx.get(Tools);
    assert.deepStrictEqual(tools.names(), ["fortune"]);
    await assert.rejects(
      tools.execute("fortune"),
      (error: unknown) =>
        isTerretError(error, "Denied") &&
        error.message === 'Cannot run tool "fortune": the allow list does not name it',
    );
    await terret.loader.reconfigure("tools.allow", { allow: ["fortune"] });
    assert.equal(await terret.ctx.get(Tools).execute("fortune"), "You will ship it.");
  }

  await using allowed = await bootProfile("fortune", {
    ...options,
    patches: [tree.path("allow.yml")],
  });
  assert.equal(await allowed.ctx.get(Tools).execute("fortune"), "You will ship it.");
  await allowed.loader.fiber("tools.fortune")!.dispose();
  assert.deepStrictEqual(allowed.ctx.get(Tools).names(), []);
});

Deno.test("trt doctor and dump-config see the discovered stranger bundle from the working directory", async () => {
  await using tree = await writeTree(STRANGER);
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: (text: string) => void out.push(text),
    stderr: (text: string) => void err.push(text),
    env: { get: () => undefined },
    cwd: tree.path("project"),
  };
  const code = await runTrt(["doctor", "--home", tree.path("home"), "--profile", "fortune"], io, {
    bundleDirs: [FIXTURE_BUNDLES],
  });
  assert.equal(code, 0);
  assert.deepStrictEqual(out.join("").split("\n").slice(1), [
    "ok      rows tools.allow: ok (stand-in-tools-allow)",
    "ok      rows tools.registry: ok (stand-in-tools)",
    "ok      rows tools.fortune: ok (terret-fortune)",
    "ok      permissions: every grant is scoped",
    "",
  ]);
  assert.equal(err.join(""), "trt doctor: no errors, 0 warnings\n");
});

Deno.test("a package named by path (deno.json metadata) needs --allow-config-code before its code loads", async () => {
  await using tree = await writeTree({
    ...STRANGER,
    "home/profiles/fortune/profile.yml": "bundles:\n  - stand-in-tools\n  - ../../../vendor/dice\n",
    "vendor/dice/deno.json": JSON.stringify({
      name: "@stranger/dice",
      terret: { bundle: "dice.yml" },
    }),
    "vendor/dice/dice.yml":
      "plugins:\n  dice: ./dice.js#dice\nrows:\n  - { id: tools.dice, plugin: dice }\n",
    "vendor/dice/dice.js":
      `const Tools = { key: "tools", description: "" };\nexport const dice = { name: "dice", inject: [Tools], apply(ctx) { ctx.effect(() => ctx.get(Tools).register({ name: "dice", execute: () => "4" })); } };\n`,
  });
  const options = {
    home: tree.path("home"),
    cwd: tree.path("project"),
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
    context: { mode: "test" as const },
  };
  await assert.rejects(
    bootProfile("fortune", options),
    (error: unknown) =>
      isTerretError(error, "ConfigCodeRefused") &&
      error.message ===
        `Cannot load plugin "dice" from "./dice.js#dice" (declared by bundle ../../../vendor/dice (${
          tree.path("vendor/dice/dice.yml")
        })): bundle "../../../vendor/dice" is named by path in profile ${
          tree.path("home/profiles/fortune/profile.yml")
        }, which runs code named by config; pass --allow-config-code to allow it`,
  );
  await using terret = await bootProfile("fortune", {
    ...options,
    allowConfigCode: true,
    patches: [tree.path("allow.yml")],
  });
  assert.deepStrictEqual(terret.ctx.get(Tools).names(), ["dice"]);
  await assert.rejects(
    terret.ctx.get(Tools).execute("dice"),
    /^TerretError: Cannot run tool "dice": the allow list does not name it$/,
  );
});
