/**
 * Small file helpers shared by composition: reading text from a path or URL, and probing paths so that a probe the
 * host's permissions do not cover reads as "absent" (a scoped host probes exactly what it was granted).
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Reads a text file from a path or a `file:`/`https:` URL. */
export async function readText(location: string | URL): Promise<string> {
  const url = toUrl(location);
  if (url.protocol === "file:") return await Deno.readTextFile(url);
  const response = await fetch(url);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Deno.errors.NotFound(`${url.href} answered ${response.status}`);
  }
  return await response.text();
}

/** True when `path` exists as a file; false when it is absent or outside the host's read grant. */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotCapable) {
      return false;
    }
    if (error instanceof Deno.errors.NotADirectory) return false;
    throw error;
  }
}

/** A `URL` for a path (resolved against `cwd`) or URL string. */
export function toUrl(location: string | URL, cwd?: string): URL {
  if (location instanceof URL) return location;
  if (/^[a-z][a-z0-9+.-]+:/i.test(location)) return new URL(location);
  return pathToFileURL(cwd === undefined ? location : resolve(cwd, location));
}

/** The local path of a `file:` URL, or the URL text for anything else (for messages). */
export function displayPath(location: string | URL): string {
  const url = location instanceof URL ? location : toUrl(location);
  return url.protocol === "file:" ? fileURLToPath(url) : url.href;
}

/** `path` made absolute against `cwd`. */
export function absolute(path: string, cwd: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}
