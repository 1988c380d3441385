import assert from "node:assert/strict";
import fc from "fast-check";
import { TerretError } from "@terret/hames";
import {
  MAX_PAYLOAD_DEPTH,
  normalizePayload,
  type Scrubber,
  STRUCTURAL_PART_KEYS,
  STRUCTURAL_TOP_KEYS,
} from "./normalize_payload.ts";

// ------------------------------------------------------------------------------------------------------------------
// The reference: the append boundary's rules written as plainly as possible (a path string built at every step, a
// Set of ancestors, a char loop for the UTF-8 size). The optimized walker must agree with it on every input:
// the same value, JSON and size, or the same error (class, code, message and details).

type Surface = "top" | "part" | "call" | "content" | "exempt";

function reference(
  type: string,
  payload: unknown,
  scrubbers: readonly Scrubber[],
  maxBytes: number,
): { value: unknown; json: string; bytes: number } {
  let chars = 0;
  const ancestors = new Set<object>();
  const refuse = (path: string, what: string) =>
    new TerretError("InvalidPayload", `Cannot append "${type}": ${path} ${what}`, {
      details: { type, path },
    });
  const tooLarge = (bytes: number | undefined) =>
    new TerretError(
      "PayloadTooLarge",
      `Cannot append "${type}": the payload is ${
        bytes === undefined ? "more than" : `${bytes} bytes, over`
      } the ${maxBytes}-byte cap`,
      { details: { type, max_bytes: maxBytes, ...(bytes === undefined ? {} : { bytes }) } },
    );
  const scrub = (text: string, path: string): string => {
    let out = text;
    for (const scrubber of scrubbers) {
      out = scrubber(out);
      if (typeof out !== "string") {
        throw new TypeError(
          `Cannot scrub ${path} of "${type}": a scrubber returned a ${typeof out}`,
        );
      }
    }
    if (out !== text && !out.isWellFormed()) {
      throw new TypeError(`Cannot scrub ${path} of "${type}": a scrubber returned invalid UTF-8`);
    }
    return out;
  };
  const child = (surface: Surface, key: string, item: unknown): Surface => {
    if (surface === "top") {
      if (STRUCTURAL_TOP_KEYS.has(key)) return "exempt";
      if ((key === "parts" || key === "content") && Array.isArray(item)) return "part";
      if (key === "call" && typeof item === "object" && !Array.isArray(item)) return "call";
      return "content";
    }
    if (surface === "part") return STRUCTURAL_PART_KEYS.has(key) ? "exempt" : "content";
    if (surface === "call") return key === "id" ? "exempt" : "content";
    return surface;
  };
  const walk = (value: unknown, path: string, surface: Surface, depth: number): unknown => {
    if (typeof value === "string") {
      chars += value.length;
      if (chars > maxBytes) throw tooLarge(undefined);
      if (!value.isWellFormed()) throw refuse(path, "contains a lone surrogate (invalid UTF-8)");
      return surface === "exempt" ? value : scrub(value, path);
    }
    if (typeof value === "number") {
      if (!Number.isFinite(value)) throw refuse(path, `is ${value} (not JSON)`);
      return value === 0 ? 0 : value;
    }
    if (typeof value === "boolean" || value === null) return value;
    if (typeof value === "undefined") throw refuse(path, "is undefined (not JSON)");
    if (typeof value !== "object") throw refuse(path, `is a ${typeof value} (not JSON)`);
    if (depth >= MAX_PAYLOAD_DEPTH) {
      throw refuse(path, `nests deeper than ${MAX_PAYLOAD_DEPTH} levels`);
    }
    if (ancestors.has(value)) throw refuse(path, "is a cycle (not JSON)");
    ancestors.add(value);
    try {
      if (Array.isArray(value)) {
        const element: Surface = surface === "top" ? "content" : surface;
        const out: unknown[] = [];
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw refuse(`${path}[${i}]`, "is a hole (not JSON)");
          out.push(walk(value[i], `${path}[${i}]`, element, depth + 1));
        }
        return Object.freeze(out);
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
        throw refuse(path, `is a ${name} (not a plain JSON object)`);
      }
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        const at = `${path}.${key}`;
        chars += key.length;
        if (!key.isWellFormed()) {
          throw refuse(at, "has a key with a lone surrogate (invalid UTF-8)");
        }
        const name = surface === "content" ? scrub(key, at) : key;
        if (Object.hasOwn(out, name)) {
          throw refuse(
            at,
            `collides with another key once scrubbed (both become ${JSON.stringify(name)})`,
          );
        }
        Object.defineProperty(out, name, {
          value: walk(item, at, child(surface, key, item), depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return Object.freeze(out);
    } finally {
      ancestors.delete(value);
    }
  };
  const value = walk(payload, "payload", "top", 0);
  const json = JSON.stringify(value);
  let bytes = 0;
  for (const char of json) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  if (json.length > maxBytes * 3) bytes = json.length;
  if (bytes > maxBytes) throw tooLarge(bytes);
  return { value, json, bytes };
}

// ------------------------------------------------------------------------------------------------------------------

type Outcome =
  | { readonly ok: true; readonly value: unknown; readonly json: string; readonly bytes: number }
  | { readonly ok: false; readonly error: unknown };

function outcome(run: () => { value: unknown; json: string; bytes: number }): Outcome {
  try {
    const { value, json, bytes } = run();
    return { ok: true, value, json, bytes };
  } catch (error) {
    return {
      ok: false,
      error: error instanceof TerretError
        ? ["TerretError", error.code, error.message, error.details]
        : error instanceof Error
        ? [error.constructor.name, error.message]
        : error,
    };
  }
}

class Point {
  constructor(readonly x = 1) {}
}

const KEYS = [
  "id",
  "type",
  "kind",
  "status",
  "parts",
  "content",
  "call",
  "args",
  "text",
  "name",
  "signature",
  "media_type",
  "__proto__",
  "constructor",
  "sk-a",
  "sk-b",
  "SK-A",
  "a\ud800",
  "é",
];

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom("sk-secret", "SK-SECRET", "\ud800", "a\udc00b", "é✓𝄞", "", "-0"),
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, 0, NaN, Infinity, -Infinity, 1e21),
  fc.boolean(),
  fc.constantFrom(null, undefined),
  fc.constantFrom(() => 1, Symbol("s"), 10n, new Date(0), new Map(), new Point()),
);

const tree: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }),
    fc.sparseArray(tie("node"), { maxLength: 4 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string()), tie("node")), {
      maxLength: 4,
    }).map((entries) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of entries) {
        Object.defineProperty(out, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie("node")), { maxLength: 3 }).map((entries) => {
      const out = Object.create(null) as Record<string, unknown>;
      for (const [key, value] of entries) out[key] = value;
      return out;
    }),
  ),
})).node;

const SCRUBBERS: readonly Scrubber[] = [
  (text) => text.replaceAll(/sk-[a-z]*/gi, "[REDACTED]"),
  (text) => text.toUpperCase(),
  (text) => text.length > 6 ? "long" : text,
  (text) => (text === "boom" ? (1 as unknown as string) : text),
  (text) => (text.startsWith("x") ? "\ud800" : text),
];

const scrubbers = fc.subarray([...SCRUBBERS], { maxLength: 3 });
const maxBytes = fc.oneof(fc.constant(16 * 1024 * 1024), fc.integer({ min: 2, max: 120 }));

Deno.test("normalizePayload() agrees with the plain reference on every generated payload (values, sizes and errors)", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("user/message", "tool/call", "assistant/message", "approval/requested"),
      tree,
      scrubbers,
      maxBytes,
      (type, payload, fns, max) => {
        assert.deepStrictEqual(
          outcome(() => normalizePayload(type, payload, { scrubbers: fns, maxBytes: max })),
          outcome(() => reference(type, payload, fns, max)),
        );
      },
    ),
    { numRuns: 3000, seed: 20261130 },
  );
});

Deno.test("normalizePayload() refuses cycles and deep nesting with the reference's paths, and accepts shared objects", () => {
  const shared = { n: 1 };
  const cyclic: Record<string, unknown> = { content: [{ type: "text", text: "a" }] };
  (cyclic.content as Record<string, unknown>[])[0]!.self = cyclic;
  let deep: unknown = "leaf";
  for (let i = 0; i < MAX_PAYLOAD_DEPTH + 1; i++) deep = { k: deep };
  for (const payload of [{ a: shared, b: [shared, shared] }, cyclic, deep, [[[[cyclic]]]]]) {
    assert.deepStrictEqual(
      outcome(() => normalizePayload("user/message", payload)),
      outcome(() => reference("user/message", payload, [], 16 * 1024 * 1024)),
    );
  }
  assert.deepStrictEqual(outcome(() => normalizePayload("user/message", cyclic)), {
    ok: false,
    error: [
      "TerretError",
      "InvalidPayload",
      'Cannot append "user/message": payload.content[0].self is a cycle (not JSON)',
      { type: "user/message", path: "payload.content[0].self" },
    ],
  });
});
