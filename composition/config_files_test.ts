import assert from "node:assert/strict";
import { parseBundle, parsePatch, parseProfile } from "./config_files.ts";
import { COMPOSITION_ERRORS, type CompositionErrorCode } from "./errors.ts";

function refused(run: () => unknown, code: CompositionErrorCode, message: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(COMPOSITION_ERRORS.is(error, code), `expected ${code}, got ${error}`);
    assert.equal(error.message, message);
    return true;
  });
}

Deno.test("a YAML syntax error names the file, line and column", () => {
  refused(
    () =>
      parsePatch(
        "rows:\n  - id: llm.main\n    config: { model: [a, b }\n",
        "/h/patch.yml",
        "home patch",
      ),
    "ConfigSyntax",
    'Cannot read "/h/patch.yml": line 3, column 28: Flow sequence in block collection must be sufficiently indented and end with a ]',
  );
});

Deno.test("an unknown tag is refused, never dropped, wherever it appears", () => {
  refused(
    () =>
      parsePatch(
        "rows:\n  - id: llm.main\n    config: { key: !ruby File.read }\n",
        "/h/patch.yml",
        "home patch",
      ),
    "ConfigSyntax",
    'Cannot read "/h/patch.yml": line 3, column 20: unknown tag "!ruby" (only !env and !setting are allowed)',
  );
  refused(
    () => parsePatch("settings:\n  x: !!binary aGVsbG8=\n", "/h/patch.yml", "home patch"),
    "ConfigSyntax",
    'Cannot read "/h/patch.yml": line 2, column 15: unknown tag "!!binary" (only !env and !setting are allowed)',
  );
  refused(
    () =>
      parsePatch(
        "rows:\n  - id: x\n    config: { k: !env not-a-name }\n",
        "/h/patch.yml",
        "home patch",
      ),
    "ConfigSyntax",
    'Cannot read "/h/patch.yml": line 3, column 18: invalid tag "!env not-a-name": expected an environment variable name',
  );
});

Deno.test("a tag outside a row's config or settings is refused", () => {
  refused(
    () => parseBundle("rows:\n  - id: x\n    plugin: !env PLUGIN\n", "/b/base.yml", "bundle base"),
    "ConfigShape",
    'Cannot read bundle "/b/base.yml": line 3: "!env PLUGIN" at "rows.0.plugin": tags are only allowed inside a row\'s config and in settings',
  );
});

Deno.test("unknown keys, wrong types and duplicate keys are refused with the row and the line", () => {
  refused(
    () =>
      parsePatch(
        "rows:\n  - id: llm.main\n    confg: { model: a }\n",
        "/h/patch.yml",
        "home patch",
      ),
    "ConfigShape",
    'Cannot read patch "/h/patch.yml": line 2: row "llm.main": unknown key "confg" (expected id, plugin, config, disabled, isolate, before, after)',
  );
  refused(
    () =>
      parsePatch(
        "rows:\n  - id: llm.main\n    disabled: yes please\n",
        "/h/patch.yml",
        "home patch",
      ),
    "ConfigShape",
    'Cannot read patch "/h/patch.yml": line 3: row "llm.main": key "disabled" expected boolean, received string',
  );
  refused(
    () => parsePatch("rowz: []\n", "/h/patch.yml", "home patch"),
    "ConfigShape",
    'Cannot read patch "/h/patch.yml": line 1: unknown key "rowz" (expected rows, settings)',
  );
  refused(
    () => parsePatch("rows: []\nrows: []\n", "/h/patch.yml", "home patch"),
    "ConfigSyntax",
    'Cannot read "/h/patch.yml": line 2, column 1: Map keys must be unique',
  );
  refused(
    () => parseProfile("bundles: []\n", "/h/profiles/x/profile.yml"),
    "ConfigShape",
    'Cannot read profile "/h/profiles/x/profile.yml": line 1: "bundles": Too small: expected array to have >=1 items',
  );
});

Deno.test("an empty patch file is an empty layer", () => {
  assert.deepStrictEqual(parsePatch("# nothing yet\n", "/h/patch.yml", "home patch").rows, []);
});
