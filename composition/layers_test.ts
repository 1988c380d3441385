import assert from "node:assert/strict";
import { parseBundle, parsePatch } from "./config_files.ts";
import { ConfigTag } from "./config_tag.ts";
import { composeLayers, type Layer } from "./layers.ts";
import { COMPOSITION_ERRORS } from "./errors.ts";

function bundle(name: string, text: string): Layer {
  const file = `/b/${name}.yml`;
  return {
    kind: "bundle",
    name: `bundle ${name}`,
    file,
    rows: parseBundle(text, file, `bundle ${name}`).rows,
  };
}

function patch(name: string, text: string): Layer {
  const file = `/p/${name}.yml`;
  return { kind: "patch", name, file, rows: parsePatch(text, file, name).rows };
}

const BASE = `
rows:
  - id: llm.main
    plugin: openrouter
    config: { model: a, retry: { max: 3, backoff: 2 } }
  - id: tools.allow
    plugin: allow
    config: { allow: [] }
  - id: interfaces.ws
    plugin: ws
    disabled: true
`;

function summary(layers: Layer[]): unknown[] {
  return composeLayers(layers).map((row) => ({
    id: row.id,
    plugin: row.plugin,
    config: row.config,
    disabled: row.disabled,
    setBy: row.setBy.layer,
    configBy: `${row.configBy.layer}:${row.configBy.line}`,
  }));
}

Deno.test("composeLayers() lets each layer override the one before by id, in layer order", () => {
  const rows = summary([
    bundle("base", BASE),
    bundle(
      "extra",
      "rows:\n  - id: tools.allow\n    plugin: allow-v2\n    config: { allow: [Read] }\n",
    ),
    patch("profile patch", "rows:\n  - id: tools.allow\n    config: { allow: [Read, Grep] }\n"),
    patch("home patch", "rows:\n  - id: interfaces.ws\n    disabled: false\n"),
    patch("--patch", "rows:\n  - id: tools.allow\n    config: { allow: [Bash] }\n"),
  ]);
  assert.deepStrictEqual(rows, [
    {
      id: "llm.main",
      plugin: "openrouter",
      config: { model: "a", retry: { max: 3, backoff: 2 } },
      disabled: false,
      setBy: "bundle base",
      configBy: "bundle base:3",
    },
    {
      id: "tools.allow",
      plugin: "allow-v2",
      config: { allow: ["Bash"] },
      disabled: false,
      setBy: "bundle extra",
      configBy: "--patch:2",
    },
    {
      id: "interfaces.ws",
      plugin: "ws",
      config: {},
      disabled: false,
      setBy: "bundle base",
      configBy: "bundle base:9",
    },
  ]);
});

Deno.test("composeLayers() replaces a row's config wholesale and never deep-merges", () => {
  const [row] = composeLayers([
    bundle("base", BASE),
    patch("home patch", "rows:\n  - id: llm.main\n    config: { retry: { max: 5 } }\n"),
  ]);
  assert.deepStrictEqual(row!.config, { retry: { max: 5 } });
  assert.equal(row!.plugin, "openrouter");
});

Deno.test("composeLayers() inserts new rows at before/after anchors, or appends them", () => {
  const ids = composeLayers([
    bundle("base", BASE),
    patch(
      "--patch",
      `rows:
  - { id: mcp.docs, plugin: mcp, after: llm.main }
  - { id: approvals, plugin: approvals, before: interfaces.ws }
  - { id: first, plugin: x, before: llm.main }
  - { id: last, plugin: x }
`,
    ),
  ]).map((row) => row.id);
  assert.deepStrictEqual(ids, [
    "first",
    "llm.main",
    "mcp.docs",
    "tools.allow",
    "approvals",
    "interfaces.ws",
    "last",
  ]);
});

Deno.test("composeLayers() refuses a patch row naming an unknown id, naming the file, line and known ids", () => {
  assert.throws(
    () =>
      composeLayers([
        bundle("base", BASE),
        patch("home patch", "rows:\n  - id: llm.mian\n    config: { model: b }\n"),
      ]),
    (error: unknown) =>
      COMPOSITION_ERRORS.is(error, "PatchTargetMissing") &&
      error.message ===
        'Cannot apply row "llm.mian" from home patch "/p/home patch.yml" line 2: no earlier layer has a row with this id (known: llm.main, tools.allow, interfaces.ws); to insert a new row, give it a plugin',
  );
});

Deno.test("composeLayers() refuses a missing anchor and an anchor on an existing row", () => {
  assert.throws(
    () =>
      composeLayers([
        bundle("base", BASE),
        patch("--patch", "rows:\n  - { id: n, plugin: x, after: nope }\n"),
      ]),
    (error: unknown) =>
      COMPOSITION_ERRORS.is(error, "PatchAnchorMissing") &&
      error.message ===
        'Cannot insert row "n" from --patch "/p/--patch.yml" line 2: its anchor "after: nope" names no earlier row',
  );
  assert.throws(
    () =>
      composeLayers([
        bundle("base", BASE),
        patch("--patch", "rows:\n  - { id: llm.main, before: tools.allow }\n"),
      ]),
    (error: unknown) =>
      COMPOSITION_ERRORS.is(error, "ConfigShape") &&
      error.message ===
        'Cannot apply row "llm.main" from --patch "/p/--patch.yml" line 2: "before"/"after" only place new rows, and this id already exists (set by bundle base)',
  );
});

Deno.test("composeLayers() refuses a patch row that sets nothing", () => {
  assert.throws(
    () => composeLayers([bundle("base", BASE), patch("--patch", "rows:\n  - id: llm.main\n")]),
    (error: unknown) =>
      COMPOSITION_ERRORS.is(error, "ConfigShape") &&
      error.message ===
        'Cannot apply row "llm.main" from --patch "/p/--patch.yml" line 2: it sets nothing (give it config, plugin, disabled or isolate)',
  );
});

Deno.test("parsePatch() keeps tags as ConfigTag values; they are not resolved while composing", () => {
  const [row] = composeLayers([
    bundle("base", BASE),
    patch(
      "home patch",
      "rows:\n  - id: llm.main\n    config: { key: !env OPENROUTER_API_KEY, model: !setting llm.model }\n",
    ),
  ]);
  assert.deepStrictEqual(row!.config, {
    key: new ConfigTag("env", "OPENROUTER_API_KEY"),
    model: new ConfigTag("setting", "llm.model"),
  });
});
