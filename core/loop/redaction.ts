/**
 * Recognising redacted values: a logged tool call whose name or arguments carry a scrubber's replacement marker
 * can no longer be reconstructed, so resume refuses to re-execute it.
 *
 * @module
 */

/**
 * True when `value` carries one of `markers`: a string containing one, or an array or object with such a string
 * among its items, keys or values (at any depth).
 *
 * @example
 * ```ts
 * import { carriesMarker } from "@terret/core/loop";
 * console.log(carriesMarker({ command: "curl -H 'Bearer [REDACTED]'" }, ["[REDACTED]"])); // true
 * console.log(carriesMarker({ "[REDACTED]": 1 }, ["[REDACTED]"])); // true
 * console.log(carriesMarker({ command: "ls" }, ["[REDACTED]"])); // false
 * ```
 */
export function carriesMarker(value: unknown, markers: readonly string[]): boolean {
  if (markers.length === 0) return false;
  const seen = new Set<object>();
  const visit = (item: unknown): boolean => {
    if (typeof item === "string") return markers.some((marker) => item.includes(marker));
    if (typeof item !== "object" || item === null || seen.has(item)) return false;
    seen.add(item);
    if (Array.isArray(item)) return item.some(visit);
    return Object.entries(item).some(([key, child]) => visit(key) || visit(child));
  };
  return visit(value);
}
