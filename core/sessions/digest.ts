/**
 * Stable digests of message lists: the mechanical form of "model-visible means logged".
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Message } from "../llm/vocabulary.ts";

/**
 * Encodes a JSON value canonically: object keys sorted by code unit, no whitespace, `undefined` members omitted,
 * `-0` as `0`. Two values encode identically exactly when they are equal as JSON.
 *
 * @throws {TypeError} for a value JSON cannot represent (a function, a bigint, a cycle, a non-finite number)
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  encode(value, parts, new Set());
  return parts.join("");
}

function encode(value: unknown, out: string[], seen: Set<object>): void {
  if (value === null) return void out.push("null");
  switch (typeof value) {
    case "string":
      return void out.push(JSON.stringify(value));
    case "boolean":
      return void out.push(value ? "true" : "false");
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`Cannot encode ${value} as canonical JSON`);
      return void out.push(value === 0 ? "0" : JSON.stringify(value));
    case "object":
      break;
    default:
      throw new TypeError(`Cannot encode a ${typeof value} as canonical JSON`);
  }
  const object = value as object;
  if (seen.has(object)) throw new TypeError("Cannot encode a cycle as canonical JSON");
  seen.add(object);
  if (Array.isArray(object)) {
    out.push("[");
    object.forEach((item, i) => {
      if (i > 0) out.push(",");
      encode(item === undefined ? null : item, out, seen);
    });
    out.push("]");
  } else {
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort();
    out.push("{");
    keys.forEach((key, i) => {
      out.push(i > 0 ? "," : "", JSON.stringify(key), ":");
      encode(record[key], out, seen);
    });
    out.push("}");
  }
  seen.delete(object);
}

/**
 * The SHA-256 (hex) of the canonical JSON of a message list.
 *
 * @example
 * ```ts
 * import { digestMessages } from "@terret/core/sessions";
 * const a = digestMessages([{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
 * const b = digestMessages([{ parts: [{ text: "hi", type: "text" }], role: "user" }]);
 * console.log(a === b); // true
 * ```
 */
export function digestMessages(messages: readonly Message[]): string {
  return createHash("sha256").update(canonicalJson(messages)).digest("hex");
}

/** The index of the first message whose canonical encoding differs (the shorter length when one is a prefix). */
export function firstDifference(a: readonly Message[], b: readonly Message[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (canonicalJson(a[i]) !== canonicalJson(b[i])) return i;
  }
  return n;
}
