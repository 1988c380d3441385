/**
 * Path helpers shared by the execution world.
 *
 * @module
 */
import { isAbsolute, normalize, sep } from "node:path";

/**
 * True when `path` is `dir` or lies below it, comparing normalized absolute paths with a trailing-separator guard
 * (`/ws` never admits `/ws-evil`). Both must already be real paths for this to mean containment.
 */
export function isInside(path: string, dir: string): boolean {
  if (!isAbsolute(path) || !isAbsolute(dir)) return false;
  const p = normalize(path);
  const d = normalize(dir);
  if (p === d) return true;
  const prefix = d.endsWith(sep) ? d : d + sep;
  return p.startsWith(prefix);
}
