/**
 * The extension story end to end: a stranger package, built on disk here, declares a terret bundle in its package
 * metadata; a profile lists it by name; it is discovered, composed, booted, its tool run, and denied until the allow
 * list names it.
 *
 * The tool registry and the `tools.allow` floor are the real ones (`terret-tools`, `terret-tools-allow`), composed
 * from the fixture bundle `core-tools` (the base bundle without the model, the sandbox and the socket), and the tool
 * runs through the registry's real pipeline in a real session.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import assert from "node:assert/strict";
import type { Context } from "@terret/hames";
import { SessionsKey, ToolsKey } from "@terret/core";
import { runTrt } from "@terret/cli";
import { bootProfile, COMPOSITION_ERRORS, resolveProfile } from "@terret/terret";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "./fixtures/composition/tree.ts";

/** Runs `name` through the real registry as agent "a1" in a fresh session; returns the tool/result payload. */
async function runTool(ctx: Context, name: string): Promise<unknown> {
  const session = await ctx.get(SessionsKey).create();
  return await ctx.get(ToolsKey).execute({ id: "call-1", name, args: {} }, {
    ctx,
    session_id: session.session_id,
    agent_id: "a1",
  });
}

/** The registry's answer when the allow-list floor does not name the tool. */
function denied(name: string): unknown {
  const content =
    `Cannot run tool "${name}": it is not on the allow list (denied by policy). Do not call it ` +
    "again; use a tool you are allowed to use or continue without it.";
  return { id: "call-1", name, content, is_error: true };
}

const FORTUNE_JS = `
// A third-party plugin: plain JavaScript, no dependency on Terret's packages at all. It asks for the tool
// registry by its service key and registers one tool as an effect of its own context (it dies with the row).
const Tools = Object.freeze({ key: "tools", description: "Tool registry" });
export const fortune = {
  name: "terret-fortune",
  description: "Tells a fortune",
  inject: [Tools],
  apply(ctx, config) {
    ctx.get(Tools).register(ctx, {
      name: "fortune",
      description: "Tells a fortune",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      mutating: false,
      approval: "never",
      handler: () => config.fortunes[0],
    });
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
  "home/profiles/fortune/profile.yml": "bundles:\n  - core-tools\n  - terret-fortune\n",
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
    ["bundle core-tools", fileURLToPath(new URL("core-tools.yml", FIXTURE_BUNDLES))],
    ["bundle terret-fortune", bundle],
  ]);
  assert.deepStrictEqual(resolved.plugins.get("terret-fortune"), {
    name: "terret-fortune",
    declaredBy: `bundle terret-fortune (${bundle})`,
    specifier: "../fortune.js#fortune",
    module: pathToFileURL(tree.path("project/node_modules/terret-fortune/fortune.js")).href,
    exportName: "fortune",
    readScope: tree.path("project/node_modules/terret-fortune"),
  });

  {
    await using terret = await bootProfile("fortune", options);
    const tools = terret.ctx.get(ToolsKey);
    assert.deepStrictEqual(tools.list().map((tool) => tool.name), ["fortune"]);
    assert.deepStrictEqual(await runTool(terret.ctx, "fortune"), denied("fortune"));
    await terret.loader.reconfigure("tools.allow", { allow: ["fortune"] });
    assert.deepStrictEqual(await runTool(terret.ctx, "fortune"), {
      id: "call-1",
      name: "fortune",
      content: "You will ship it.",
      is_error: false,
    });
  }

  await using allowed = await bootProfile("fortune", {
    ...options,
    patches: [tree.path("allow.yml")],
  });
  assert.deepStrictEqual(await runTool(allowed.ctx, "fortune"), {
    id: "call-1",
    name: "fortune",
    content: "You will ship it.",
    is_error: false,
  });
  await allowed.loader.fiber("tools.fortune")!.dispose();
  assert.deepStrictEqual(allowed.ctx.get(ToolsKey).list(), []);
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
    "ok      rows sessions.store: config valid (terret-store-memory)",
    "ok      rows sessions: config valid (terret-sessions)",
    "ok      rows tools: config valid (terret-tools)",
    "ok      rows tools.allow: config valid (terret-tools-allow)",
    "ok      rows tools.fortune: config valid (terret-fortune)",
    "ok      permissions: every grant is scoped",
    "",
  ]);
  assert.equal(err.join(""), "trt doctor: no errors, 0 warnings\n");
});

Deno.test("a package named by path (deno.json metadata) needs --allow-config-code before its code loads", async () => {
  await using tree = await writeTree({
    ...STRANGER,
    "home/profiles/fortune/profile.yml": "bundles:\n  - core-tools\n  - ../../../vendor/dice\n",
    "vendor/dice/deno.json": JSON.stringify({
      name: "@stranger/dice",
      terret: { bundle: "dice.yml" },
    }),
    "vendor/dice/dice.yml":
      "plugins:\n  dice: ./dice.js#dice\nrows:\n  - { id: tools.dice, plugin: dice }\n",
    "vendor/dice/dice.js":
      `const Tools = { key: "tools", description: "" };\nexport const dice = { name: "dice", inject: [Tools], apply(ctx) { ctx.get(Tools).register(ctx, { name: "dice", description: "Rolls a die", parameters: { type: "object" }, handler: () => "4" }); } };\n`,
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
      COMPOSITION_ERRORS.is(error, "ConfigCodeRefused") &&
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
  assert.deepStrictEqual(terret.ctx.get(ToolsKey).list().map((tool) => tool.name), ["dice"]);
  assert.deepStrictEqual(await runTool(terret.ctx, "dice"), denied("dice"));
});
