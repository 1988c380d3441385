/**
 * Deno's path permissions do not resolve symbolic links: a link inside an allowed directory reads (and a dangling
 * one writes) outside it. Before the `deno` provider grants a workspace it walks it and refuses when a link leads
 * out.
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { resolveReal } from "../containment.ts";
import { isInside } from "../paths.ts";

/** Options for {@linkcode findEscapingLink}. */
export interface ScanOptions {
  /** Entries visited before giving up (the workspace is then refused: it cannot be vouched for). */
  readonly maxEntries: number;
  readonly maxHops?: number;
  readonly signal?: AbortSignal;
}

/**
 * Walks every directory in `dirs` (not following links) and resolves each symbolic link found.
 *
 * @returns `undefined` when every link resolves inside one of `dirs`, else the first offending link and why
 * @throws {TerretError} `Denied` when the walk passes `maxEntries`
 */
export async function findEscapingLink(
  dirs: readonly string[],
  options: ScanOptions,
): Promise<{ readonly link: string; readonly reason: string } | undefined> {
  let visited = 0;
  const stack = [...dirs];
  while (stack.length > 0) {
    options.signal?.throwIfAborted();
    const dir = stack.pop()!;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      continue; // unreadable for us is unreadable for the program too
    }
    for (const entry of entries) {
      if (++visited > options.maxEntries) {
        throw new TerretError(
          "Denied",
          `Cannot grant the workspace to a Deno program: more than ${options.maxEntries} entries to check for links leading out`,
          { details: { max_entries: options.maxEntries } },
        );
      }
      const path = dir.endsWith("/") ? `${dir}${entry.name}` : `${dir}/${entry.name}`;
      if (entry.isDirectory) stack.push(path);
      if (!entry.isSymlink) continue;
      const reason = await escapes(path, dirs, options.maxHops);
      if (reason !== undefined) return { link: path, reason };
    }
  }
  return undefined;
}

async function escapes(
  link: string,
  dirs: readonly string[],
  maxHops: number | undefined,
): Promise<string | undefined> {
  try {
    const real = await resolveReal(link, maxHops === undefined ? {} : { maxHops });
    return dirs.some((dir) => isInside(real, dir)) ? undefined : `it leads to "${real}"`;
  } catch (error) {
    return (error as Error).message.replace(/^Cannot resolve "[^"]*": /, "");
  }
}
