/**
 * Identity-checked leaf opens. Deno has no `O_NOFOLLOW`, so a file is `lstat`ed before the open and `fstat`ed after
 * it; a different device or inode means something (a symbolic link, another file) was swapped in between, and the
 * handle is closed unused.
 *
 * @module
 */
import { TerretError } from "../errors.ts";

/** What an identity-checked open returns. */
export interface CheckedFile {
  readonly file: Deno.FsFile;
  /** `fstat` of the opened handle. */
  readonly info: Deno.FileInfo;
}

/** `lstat`, or `undefined` when nothing is there. */
export async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw error;
  }
}

/**
 * Requires `before` (the `lstat` of a contained real path) to be a regular file, opens it, and checks the handle is
 * that same file.
 *
 * @throws {TerretError} `Denied` when the path became a link or another file, `NotAFile` when it is not a regular
 *   file
 */
export async function openChecked(
  path: string,
  before: Deno.FileInfo,
  options: Deno.OpenOptions,
  action: string,
): Promise<CheckedFile> {
  requireRegular(path, before, action);
  const file = await Deno.open(path, options);
  try {
    const info = await file.stat();
    if (!sameFile(before, info)) {
      throw new TerretError(
        "Denied",
        `Cannot ${action} "${path}": the file changed while it was being opened`,
        { details: { path } },
      );
    }
    return { file, info };
  } catch (error) {
    file.close();
    throw error;
  }
}

/**
 * Opens `path` for writing only if nothing exists there (`O_CREAT|O_EXCL`, which never follows a link), or returns
 * `undefined` when something appeared first.
 */
export async function createExclusive(
  path: string,
  mode?: number,
): Promise<Deno.FsFile | undefined> {
  try {
    return await Deno.open(path, {
      write: true,
      createNew: true,
      ...(mode === undefined ? {} : { mode }),
    });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return undefined;
    throw error;
  }
}

/** Throws unless `info` (from `lstat`) describes a regular file. */
function requireRegular(path: string, info: Deno.FileInfo, action: string): void {
  if (info.isSymlink) {
    throw new TerretError(
      "Denied",
      `Cannot ${action} "${path}": it became a symbolic link after the containment check`,
      { details: { path } },
    );
  }
  if (info.isDirectory) {
    throw new TerretError("NotAFile", `Cannot ${action} "${path}": it is a directory`, {
      details: { path },
    });
  }
  if (!info.isFile) {
    throw new TerretError("NotAFile", `Cannot ${action} "${path}": it is not a regular file`, {
      details: { path },
    });
  }
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.dev === b.dev && a.ino !== null && a.ino === b.ino;
}

/** Reads up to `limit` bytes from the handle's current position (fewer at end of file). */
export async function readUpTo(file: Deno.FsFile, limit: number): Promise<Uint8Array> {
  const out = new Uint8Array(limit);
  let filled = 0;
  while (filled < limit) {
    const n = await file.read(out.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return filled === limit ? out : out.slice(0, filled);
}

/**
 * Reads to the end of the file, or stops once more than `limit` bytes came (the caller then reports the file too
 * large). `expected` (the size `fstat` gave) sizes the first buffer; a file that grew meanwhile is still read whole.
 */
export async function readToEnd(
  file: Deno.FsFile,
  expected: number,
  limit: number,
): Promise<Uint8Array> {
  let out = new Uint8Array(Math.min(expected, limit) + 1);
  let filled = 0;
  while (filled <= limit) {
    if (filled === out.length) {
      const grown = new Uint8Array(Math.min(out.length * 2, limit + 1));
      grown.set(out);
      out = grown;
    }
    const n = await file.read(out.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return out.subarray(0, filled);
}

/** Writes every byte of `data` at the handle's current position. */
export async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) written += await file.write(data.subarray(written));
}
