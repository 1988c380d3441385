import assert from "node:assert/strict";
import { defineErrorCodes, isErrorCodes, knownCodes } from "./error_codes.ts";
import { TerretError } from "./errors.ts";
import { HAMES_ERRORS } from "./hames_errors.ts";
import { isTerretError } from "./errors.ts";

const BASE = defineErrorCodes("base", { BaseFailed: "The base failed" });
const PLUGIN = defineErrorCodes("plugin", { PluginFailed: "The plugin failed" }, [BASE]);

Deno.test("defineErrorCodes() is() accepts its own and its base's codes and nothing else", () => {
  const own = new TerretError("PluginFailed", "Cannot run: it failed");
  const inherited = new TerretError("BaseFailed", "Cannot start: the base failed");
  const foreign = new TerretError("SomethingElse", "Cannot go on");
  assert.deepStrictEqual(
    [own, inherited, foreign, new Error("plain"), "PluginFailed"].map((error) => PLUGIN.is(error)),
    [true, true, false, false, false],
  );
  assert.deepStrictEqual(
    [
      PLUGIN.is(own, "PluginFailed"),
      PLUGIN.is(own, "BaseFailed"),
      PLUGIN.is(inherited, "BaseFailed"),
    ],
    [true, false, true],
  );
  assert.deepStrictEqual([...knownCodes(PLUGIN)], ["PluginFailed", "BaseFailed"]);
  assert.deepStrictEqual(PLUGIN.codes, { PluginFailed: "The plugin failed" });
  assert.deepStrictEqual(PLUGIN.base, [BASE]);
});

Deno.test("a guard rejects an undeclared code at compile time", () => {
  const error: unknown = new TerretError("BootFailed", 'Cannot boot: row "a" failed');
  // @ts-expect-error "BootFaild" is not a kernel code
  assert.equal(isTerretError(error, "BootFaild"), false);
  // @ts-expect-error "Denid" is declared by no table this guard knows
  assert.equal(PLUGIN.is(error, "Denid"), false);
  assert.equal(isTerretError(error, "BootFailed"), true);
  if (HAMES_ERRORS.is(error, "BootFailed")) {
    const code: "BootFailed" = error.code;
    assert.equal(code, "BootFailed");
  }
});

Deno.test("defineErrorCodes() refuses a code that is not PascalCase and an empty description", () => {
  assert.throws(
    () => defineErrorCodes("bad", { not_pascal: "A condition" }),
    new TypeError('Cannot declare error code "not_pascal": codes are PascalCase'),
  );
  assert.throws(
    () => defineErrorCodes("bad", { Empty: " " }),
    new TypeError('Cannot declare error code "Empty": the description is empty'),
  );
});

Deno.test("isErrorCodes() tells a table from a look-alike", () => {
  assert.deepStrictEqual(
    [HAMES_ERRORS, PLUGIN, { owner: "x", codes: {}, base: [], is: () => true }, null].map(
      isErrorCodes,
    ),
    [true, true, false, false],
  );
});
