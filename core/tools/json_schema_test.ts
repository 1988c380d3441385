import assert from "node:assert/strict";
import { validateJsonSchema } from "./json_schema.ts";

const SEARCH = {
  type: "object",
  properties: {
    query: { type: "string", minLength: 1, maxLength: 5 },
    limit: { type: "integer", minimum: 1, maximum: 10 },
    mode: { enum: ["fast", "deep"] },
    tags: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 2, uniqueItems: true },
    filter: {
      type: "object",
      properties: { lang: { type: "string", pattern: "^[a-z]{2}$" } },
      required: ["lang"],
      additionalProperties: false,
    },
  },
  required: ["query"],
};

Deno.test("validateJsonSchema() accepts a valid value and reports nothing", () => {
  assert.deepStrictEqual(
    validateJsonSchema(SEARCH, {
      query: "ab",
      limit: 3,
      mode: "deep",
      tags: ["x", "y"],
      filter: { lang: "en" },
      extra: true,
    }),
    [],
  );
});

Deno.test("validateJsonSchema() reports each failure with its path, in document order", () => {
  assert.deepStrictEqual(
    validateJsonSchema(SEARCH, {
      limit: 2.5,
      mode: "slow",
      tags: ["x", "x", 3],
      filter: { lang: "eng", other: 1 },
    }),
    [
      { path: ["query"], message: "required property is missing" },
      { path: ["limit"], message: "expected integer, got number" },
      { path: ["mode"], message: 'expected one of "fast", "deep"' },
      { path: ["tags"], message: "must have at most 2 items" },
      { path: ["tags"], message: "items must be unique" },
      { path: ["tags", 2], message: "expected string, got number" },
      { path: ["filter", "lang"], message: 'must match the pattern "^[a-z]{2}$"' },
      { path: ["filter", "other"], message: "unknown property (not allowed here)" },
    ],
  );
});

Deno.test("validateJsonSchema() checks bounds on strings (code points) and numbers", () => {
  assert.deepStrictEqual(validateJsonSchema(SEARCH, { query: "" }), [
    { path: ["query"], message: "must have at least 1 characters" },
  ]);
  assert.deepStrictEqual(validateJsonSchema(SEARCH, { query: "😀😀😀😀😀" }), []);
  assert.deepStrictEqual(validateJsonSchema(SEARCH, { query: "abcdef", limit: 0 }), [
    { path: ["query"], message: "must have at most 5 characters" },
    { path: ["limit"], message: "must be at least 1" },
  ]);
  const num = { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.1 };
  assert.deepStrictEqual(validateJsonSchema(num, 0.3), []);
  assert.deepStrictEqual(validateJsonSchema(num, 1), [
    { path: [], message: "must be less than 1" },
  ]);
  assert.deepStrictEqual(validateJsonSchema(num, 0.25), [
    { path: [], message: "must be a multiple of 0.1" },
  ]);
  assert.deepStrictEqual(validateJsonSchema({ type: "number" }, Number.NaN), [
    { path: [], message: "expected number, got non-finite number" },
  ]);
});

Deno.test("validateJsonSchema() handles type lists, const, combinators and boolean schemas", () => {
  assert.deepStrictEqual(validateJsonSchema({ type: ["string", "null"] }, null), []);
  assert.deepStrictEqual(validateJsonSchema({ type: ["string", "null"] }, 1), [
    { path: [], message: "expected string or null, got number" },
  ]);
  assert.deepStrictEqual(validateJsonSchema({ const: { a: [1, 2] } }, { a: [1, 2] }), []);
  assert.deepStrictEqual(validateJsonSchema({ const: "x" }, "y"), [
    { path: [], message: 'expected "x"' },
  ]);
  const either = { anyOf: [{ type: "string" }, { type: "integer" }] };
  assert.deepStrictEqual(validateJsonSchema(either, 2), []);
  assert.deepStrictEqual(validateJsonSchema(either, true), [
    { path: [], message: "matches none of the allowed shapes (anyOf)" },
  ]);
  const one = { oneOf: [{ type: "number" }, { type: "integer" }] };
  assert.deepStrictEqual(validateJsonSchema(one, 1.5), []);
  assert.deepStrictEqual(validateJsonSchema(one, 1), [
    { path: [], message: "matches 2 of the shapes where exactly one is allowed (oneOf)" },
  ]);
  assert.deepStrictEqual(
    validateJsonSchema({ allOf: [{ type: "string" }, { minLength: 2 }] }, "a"),
    [{ path: [], message: "must have at least 2 characters" }],
  );
  assert.deepStrictEqual(validateJsonSchema({ not: { type: "string" } }, "a"), [
    { path: [], message: "matches a shape that is not allowed (not)" },
  ]);
  assert.deepStrictEqual(validateJsonSchema(true, 1), []);
  assert.deepStrictEqual(validateJsonSchema(false, 1), [
    { path: [], message: "no value is allowed here" },
  ]);
  assert.deepStrictEqual(
    validateJsonSchema({ type: "object", properties: { a: false } }, { a: 1 }),
    [{ path: ["a"], message: "no value is allowed here" }],
  );
});

Deno.test("validateJsonSchema() applies additionalProperties and prefixItems schemas", () => {
  const map = { type: "object", additionalProperties: { type: "integer" }, maxProperties: 2 };
  assert.deepStrictEqual(validateJsonSchema(map, { a: 1, b: "2", c: 3 }), [
    { path: [], message: "must have at most 2 properties" },
    { path: ["b"], message: "expected integer, got string" },
  ]);
  const tuple = { type: "array", prefixItems: [{ type: "string" }], items: { type: "integer" } };
  assert.deepStrictEqual(validateJsonSchema(tuple, ["a", 1, "b"]), [
    { path: [2], message: "expected integer, got string" },
  ]);
});

Deno.test("validateJsonSchema() never rejects for keywords it does not check", () => {
  const schema = {
    type: "object",
    properties: {
      when: { type: "string", format: "date-time" },
      ref: { $ref: "#/$defs/x" },
      bad: { type: "string", pattern: "(" },
    },
    patternProperties: { "^x": { type: "integer" } },
    if: { required: ["when"] },
    then: { required: ["never"] },
    dependentRequired: { when: ["never"] },
  };
  assert.deepStrictEqual(
    validateJsonSchema(schema, { when: "not a date", ref: 1, bad: "x", xy: "s" }),
    [],
  );
});
