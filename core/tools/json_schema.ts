/**
 * A subset JSON Schema validator for tool arguments that arrive with a raw JSON Schema (MCP tools), so their calls
 * are validated before they run exactly as zod-declared tools are.
 *
 * @module
 */

/** A JSON Schema object (draft 2020-12 vocabulary; only the keywords listed on {@linkcode validateJsonSchema} are checked). */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** One reason a value fails its schema: where (`path`, `[]` for the root) and what. */
export interface SchemaIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * Validates `value` against a JSON Schema, checking a faithful subset of the vocabulary.
 *
 * Checked: `type` (a name or a list of names; `integer` is a whole number), `enum`, `const`, `properties`,
 * `required`, `additionalProperties` (`false` or a schema), `items` (a schema), `prefixItems`, `minItems`,
 * `maxItems`, `uniqueItems`, `minLength`, `maxLength` (in code points), `pattern`, `minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minProperties`, `maxProperties`, `anyOf`, `oneOf`,
 * `allOf`, `not`, and the boolean schemas `true`/`false`. Every other keyword (`$ref`, `format`,
 * `patternProperties`, `if`/`then`, `dependentRequired`, …) is not checked and never causes a rejection: the
 * validator only refuses values the checked keywords refuse, so it never rejects a call the full specification
 * would accept (a server behind the schema may still refuse what this does not check). A `pattern` that is not a
 * valid JavaScript regular expression is ignored.
 *
 * @param schema the schema
 * @param value the JSON value to check
 * @returns the issues found, empty when the value passes
 *
 * @example
 * ```ts
 * import { validateJsonSchema } from "@terret/core/tools";
 * const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
 * console.log(validateJsonSchema(schema, { q: 1 })); // [{ path: ["q"], message: "expected string, got number" }]
 * ```
 */
export function validateJsonSchema(schema: JsonSchema | boolean, value: unknown): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  check(schema, value, [], issues);
  return issues;
}

type Path = (string | number)[];

function check(schema: unknown, value: unknown, path: Path, issues: SchemaIssue[]): void {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    issues.push({ path, message: "no value is allowed here" });
    return;
  }
  if (typeof schema !== "object" || schema === null) return;
  const s = schema as Record<string, unknown>;
  if (s.type !== undefined && !matchesType(s.type, value)) {
    issues.push({ path, message: `expected ${typeNames(s.type)}, got ${jsonType(value)}` });
    return;
  }
  if (Array.isArray(s.enum) && !s.enum.some((option) => jsonEqual(option, value))) {
    issues.push({
      path,
      message: `expected one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`,
    });
  }
  if ("const" in s && !jsonEqual(s.const, value)) {
    issues.push({ path, message: `expected ${JSON.stringify(s.const)}` });
  }
  if (typeof value === "string") checkString(s, value, path, issues);
  else if (typeof value === "number") checkNumber(s, value, path, issues);
  else if (Array.isArray(value)) checkArray(s, value, path, issues);
  else if (isObject(value)) checkObject(s, value, path, issues);
  checkCombinators(s, value, path, issues);
}

function checkCombinators(
  s: Record<string, unknown>,
  value: unknown,
  path: Path,
  issues: SchemaIssue[],
): void {
  if (Array.isArray(s.allOf)) { for (const member of s.allOf) check(member, value, path, issues); }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((member) => passes(member, value))) {
    issues.push({ path, message: "matches none of the allowed shapes (anyOf)" });
  }
  if (Array.isArray(s.oneOf)) {
    const count = s.oneOf.filter((member) => passes(member, value)).length;
    if (count !== 1) {
      issues.push({
        path,
        message: count === 0
          ? "matches none of the allowed shapes (oneOf)"
          : `matches ${count} of the shapes where exactly one is allowed (oneOf)`,
      });
    }
  }
  if (s.not !== undefined && passes(s.not, value)) {
    issues.push({ path, message: "matches a shape that is not allowed (not)" });
  }
}

function passes(schema: unknown, value: unknown): boolean {
  const found: SchemaIssue[] = [];
  check(schema, value, [], found);
  return found.length === 0;
}

function checkString(
  s: Record<string, unknown>,
  value: string,
  path: Path,
  issues: SchemaIssue[],
): void {
  const length = [...value].length;
  if (typeof s.minLength === "number" && length < s.minLength) {
    issues.push({ path, message: `must have at least ${s.minLength} characters` });
  }
  if (typeof s.maxLength === "number" && length > s.maxLength) {
    issues.push({ path, message: `must have at most ${s.maxLength} characters` });
  }
  if (typeof s.pattern === "string") {
    const regexp = compile(s.pattern);
    if (regexp !== undefined && !regexp.test(value)) {
      issues.push({ path, message: `must match the pattern ${JSON.stringify(s.pattern)}` });
    }
  }
}

function compile(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return undefined;
  }
}

function checkNumber(
  s: Record<string, unknown>,
  value: number,
  path: Path,
  issues: SchemaIssue[],
): void {
  const bound = (key: string, ok: (limit: number) => boolean, text: string): void => {
    const limit = s[key];
    if (typeof limit === "number" && !ok(limit)) issues.push({ path, message: `${text} ${limit}` });
  };
  bound("minimum", (limit) => value >= limit, "must be at least");
  bound("maximum", (limit) => value <= limit, "must be at most");
  bound("exclusiveMinimum", (limit) => value > limit, "must be greater than");
  bound("exclusiveMaximum", (limit) => value < limit, "must be less than");
  bound("multipleOf", (limit) => limit <= 0 || isWhole(value / limit), "must be a multiple of");
}

function isWhole(quotient: number): boolean {
  return Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient));
}

function checkArray(
  s: Record<string, unknown>,
  value: unknown[],
  path: Path,
  issues: SchemaIssue[],
): void {
  if (typeof s.minItems === "number" && value.length < s.minItems) {
    issues.push({ path, message: `must have at least ${s.minItems} items` });
  }
  if (typeof s.maxItems === "number" && value.length > s.maxItems) {
    issues.push({ path, message: `must have at most ${s.maxItems} items` });
  }
  if (s.uniqueItems === true) {
    const seen = value.map((item) => canonical(item));
    if (new Set(seen).size !== seen.length) issues.push({ path, message: "items must be unique" });
  }
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
  value.forEach((item, index) => {
    const schema = index < prefix.length ? prefix[index] : s.items;
    check(schema, item, [...path, index], issues);
  });
}

function checkObject(
  s: Record<string, unknown>,
  value: Record<string, unknown>,
  path: Path,
  issues: SchemaIssue[],
): void {
  const keys = Object.keys(value);
  if (typeof s.minProperties === "number" && keys.length < s.minProperties) {
    issues.push({ path, message: `must have at least ${s.minProperties} properties` });
  }
  if (typeof s.maxProperties === "number" && keys.length > s.maxProperties) {
    issues.push({ path, message: `must have at most ${s.maxProperties} properties` });
  }
  if (Array.isArray(s.required)) {
    for (const key of s.required) {
      if (typeof key === "string" && !Object.hasOwn(value, key)) {
        issues.push({ path: [...path, key], message: "required property is missing" });
      }
    }
  }
  const properties = isObject(s.properties) ? s.properties : {};
  for (const key of keys) {
    if (Object.hasOwn(properties, key)) check(properties[key], value[key], [...path, key], issues);
    else if (s.additionalProperties === false) {
      issues.push({ path: [...path, key], message: "unknown property (not allowed here)" });
    } else if (isObject(s.additionalProperties)) {
      check(s.additionalProperties, value[key], [...path, key], issues);
    }
  }
}

function matchesType(type: unknown, value: unknown): boolean {
  const names = Array.isArray(type) ? type : [type];
  return names.some((name) => {
    switch (name) {
      case "integer":
        return typeof value === "number" && Number.isInteger(value);
      case "number":
        return typeof value === "number" && Number.isFinite(value);
      case "null":
        return value === null;
      case "array":
        return Array.isArray(value);
      case "object":
        return isObject(value);
      case "string":
        return typeof value === "string";
      case "boolean":
        return typeof value === "boolean";
      default:
        return true;
    }
  });
}

function typeNames(type: unknown): string {
  return Array.isArray(type) ? type.join(" or ") : String(type);
}

/** The JSON type name of a value, as a model would read it. */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (value === undefined) return "nothing";
  if (typeof value === "number" && !Number.isFinite(value)) return "non-finite number";
  return typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}
