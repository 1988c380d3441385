import assert from "node:assert/strict";
import { isTerretError, TerretError as BaseTerretError } from "@terret/hames";
import { CORE_ERRORS, TerretError } from "./errors.ts";

Deno.test("core's TerretError binding is the kernel's constructor with its code checked at compile time", () => {
  const error = new TerretError(
    "SessionNotFound",
    'Cannot append to session "s": it does not exist',
  );
  assert.deepStrictEqual(
    [
      error instanceof BaseTerretError,
      isTerretError(error),
      CORE_ERRORS.is(error, "SessionNotFound"),
    ],
    [true, true, true],
  );
  // @ts-expect-error "SessionNotFund" is declared by neither core's table nor the kernel's
  const misspelt = new TerretError("SessionNotFund", "Cannot append");
  // @ts-expect-error "Denied" is exec's, which core's throw sites cannot use
  const foreign = new TerretError("Denied", "Cannot read");
  const inherited = new TerretError("ConfigInvalid", 'Cannot configure "mcp.a": bad');
  assert.deepStrictEqual(
    [misspelt.code, foreign.code, inherited.code],
    ["SessionNotFund", "Denied", "ConfigInvalid"],
  );
  // Last: the assertion narrows the binding to the kernel's unchecked constructor.
  assert.equal(TerretError, BaseTerretError);
});
