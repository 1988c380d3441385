/**
 * The host-side `fs` implementation on Deno's file APIs, contained to the workspace list.
 *
 * @module
 */
import { type ExecErrorCode, TerretError } from "../errors.ts";
import { dirname } from "node:path";
import { containPath, expandHome, resolveReal } from "../containment.ts";
import { isInside } from "../paths.ts";
import {
  createExclusive,
  lstatOrUndefined,
  openChecked,
  readToEnd,
  readUpTo,
  writeAll,
} from "./_leaf.ts";
import type {
  DirEntry,
  EditOptions,
  EditResult,
  EntryType,
  FileStat,
  FileSystem,
  FsAuthorizeRequest,
  FsCallOptions,
  FsOp,
  FsVerdict,
  GlobOptions,
  GlobResult,
  ListOptions,
  ListResult,
  ReadOptions,
  WriteOptions,
  WriteResult,
} from "./file_system.ts";
import { compileGlob, maxDepth, splitGlob } from "./glob.ts";

/** The read cap when none is configured: 10 MiB. */
export const DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024;
/** How many directory entries one glob may visit when none is configured. */
export const DEFAULT_MAX_GLOB_VISITS = 200_000;

/** Options for {@linkcode DenoFileSystem}. */
export interface DenoFileSystemOptions {
  /** The granted directories: absolute real paths (the `workspace` service's `dirs`). */
  readonly dirs: readonly string[];
  /** Asked after containment for every operation (the plugin dispatches `fs/authorize` here). */
  readonly authorize?: (request: FsAuthorizeRequest) => FsVerdict | Promise<FsVerdict>;
  /** Default read cap in bytes (default {@linkcode DEFAULT_MAX_READ_BYTES}). */
  readonly maxReadBytes?: number;
  /** Symbolic-link hop cap for containment (default 40). */
  readonly maxSymlinkHops?: number;
  /** Directory entries one glob may visit before it stops, truncated (default {@linkcode DEFAULT_MAX_GLOB_VISITS}). */
  readonly maxGlobVisits?: number;
  /**
   * Directories (absolute real paths) that `read`, `stat`, `list` and `glob` also admit while `write` and `edit`
   * refuse them, read on every call (default: none). The `fs` row passes its `fs.grants`.
   */
  readonly readOnlyDirs?: () => readonly string[];
}

const encoder = new TextEncoder();
const WRITE_ATTEMPTS = 3;

/**
 * `fs` on the host file system. See {@linkcode FileSystem} for the contract; this class adds nothing to it.
 *
 * Accepted windows (as in the seed): a directory component swapped for a link between the containment check and
 * the operation is not re-checked (only the leaf is); hard links are not paths and are not detected.
 */
export class DenoFileSystem implements FileSystem {
  readonly #dirs: readonly string[];
  readonly #authorizer: (request: FsAuthorizeRequest) => FsVerdict | Promise<FsVerdict>;
  readonly #maxRead: number;
  readonly #maxHops: number | undefined;
  readonly #maxVisits: number;
  readonly #readOnly: () => readonly string[];

  constructor(options: DenoFileSystemOptions) {
    this.#dirs = Object.freeze([...options.dirs]);
    this.#authorizer = options.authorize ?? (() => ({ allow: true }));
    this.#maxRead = positive(options.maxReadBytes, DEFAULT_MAX_READ_BYTES, "maxReadBytes");
    this.#maxHops = options.maxSymlinkHops;
    this.#maxVisits = positive(options.maxGlobVisits, DEFAULT_MAX_GLOB_VISITS, "maxGlobVisits");
    this.#readOnly = options.readOnlyDirs ?? (() => []);
  }

  get dirs(): readonly string[] {
    return this.#dirs;
  }

  async read(path: string, options: ReadOptions = {}): Promise<string> {
    const bytes = await this.readBytes(path, options);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error) {
      throw new TerretError("NotText", `Cannot read "${path}" as text: it is not valid UTF-8`, {
        cause: error,
        details: { path },
      });
    }
  }

  async readBytes(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    const offset = nonNegative(options.offset, 0, "offset");
    const length = options.length === undefined
      ? undefined
      : nonNegative(options.length, 0, "length");
    const max = positive(options.maxBytes, this.#maxRead, "maxBytes");
    const real = await this.#admit(path, "read", "read", options);
    return await osErrors(path, real, "read", async () => {
      const before = await this.#existing(path, real, "read");
      const { file, info } = await openChecked(real, before, { read: true }, "read");
      try {
        const planned = Math.min(length ?? Infinity, Math.max(0, info.size - offset));
        if (planned > max) {
          throw new TerretError(
            "TooLarge",
            `Cannot read "${path}": ${planned} bytes is over the ${max}-byte read limit (read a range with offset and length)`,
            { details: { path: real, bytes: planned, limit: max } },
          );
        }
        if (offset > 0) await file.seek(offset, Deno.SeekMode.Start);
        return await readUpTo(file, planned);
      } finally {
        file.close();
      }
    });
  }

  async write(
    path: string,
    content: string | Uint8Array,
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    if (typeof content !== "string" && !(content instanceof Uint8Array)) {
      throw new TypeError(`Cannot write "${path}": the content must be a string or a Uint8Array`);
    }
    const data = typeof content === "string" ? encoder.encode(content) : content;
    const real = await this.#admit(path, "write", "write", options);
    return await osErrors(path, real, "write", async () => {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        options.signal?.throwIfAborted();
        const before = await lstatOrUndefined(real);
        if (before === undefined) {
          if (options.createParents ?? true) await Deno.mkdir(dirname(real), { recursive: true });
          const file = await createExclusive(real);
          if (file === undefined) continue; // something appeared meanwhile: look again
          try {
            await writeAll(file, data);
          } finally {
            file.close();
          }
          return { path: real, bytes: data.length, created: true };
        }
        const { file } = await openChecked(real, before, { write: true }, "write");
        try {
          await file.truncate(0);
          await writeAll(file, data);
        } finally {
          file.close();
        }
        return { path: real, bytes: data.length, created: false };
      }
      throw new TerretError("Denied", `Cannot write "${path}": the file kept changing`, {
        details: { path: real },
      });
    });
  }

  async edit(
    path: string,
    oldText: string,
    newText: string,
    options: EditOptions = {},
  ): Promise<EditResult> {
    if (typeof oldText !== "string" || oldText.length === 0) {
      throw new TypeError(`Cannot edit "${path}": the text to replace is empty`);
    }
    if (typeof newText !== "string") {
      throw new TypeError(`Cannot edit "${path}": the replacement must be a string`);
    }
    if (oldText === newText) {
      throw new TypeError(
        `Cannot edit "${path}": the replacement is identical to the text it replaces`,
      );
    }
    const real = await this.#admit(path, "edit", "edit", options);
    return await osErrors(path, real, "edit", async () => {
      const before = await this.#existing(path, real, "edit");
      if (before.size > this.#maxRead) throw this.#tooLarge(path, real, before.size);
      const { file, info } = await openChecked(real, before, { read: true, write: true }, "edit");
      try {
        const bytes = await readToEnd(file, info.size, this.#maxRead);
        if (bytes.length > this.#maxRead) throw this.#tooLarge(path, real, bytes.length);
        const text = decodeText(bytes, path, "edit");
        const positions = occurrences(text, oldText);
        checkUnique(path, positions.length, options.replaceAll ?? false);
        const updated = options.replaceAll
          ? text.split(oldText).join(newText)
          : text.slice(0, positions[0]) + newText + text.slice(positions[0]! + oldText.length);
        options.signal?.throwIfAborted();
        await file.seek(0, Deno.SeekMode.Start);
        await file.truncate(0);
        await writeAll(file, encoder.encode(updated));
        return { path: real, replacements: positions.length };
      } finally {
        file.close();
      }
    });
  }

  async stat(path: string, options: FsCallOptions = {}): Promise<FileStat> {
    const real = await this.#admit(path, "stat", "stat", options);
    return await osErrors(path, real, "stat", async () => {
      const info = await this.#existing(path, real, "stat");
      return {
        path: real,
        type: entryType(info),
        size: info.size,
        mtime: info.mtime?.getTime() ?? null,
        mode: info.mode,
      };
    });
  }

  async list(path: string, options: ListOptions = {}): Promise<ListResult> {
    const limit = positive(options.limit, 10_000, "limit");
    const real = await this.#admit(path, "list", "list", options);
    return await osErrors(path, real, "list", async () => {
      const info = await this.#existing(path, real, "list");
      if (!info.isDirectory) {
        throw new TerretError("NotADirectory", `Cannot list "${path}": it is not a directory`, {
          details: { path: real },
        });
      }
      const entries: DirEntry[] = [];
      for await (const entry of Deno.readDir(real)) {
        entries.push({ name: entry.name, path: join(real, entry.name), type: entryType(entry) });
      }
      entries.sort((a, b) => compare(a.name, b.name));
      return { entries: entries.slice(0, limit), truncated: entries.length > limit };
    });
  }

  async glob(pattern: string, options: GlobOptions = {}): Promise<GlobResult> {
    if (typeof pattern !== "string" || pattern.length === 0) {
      throw new TypeError("Cannot glob: the pattern must be a non-empty string");
    }
    const limit = positive(options.limit, 10_000, "limit");
    const { base, segments } = splitGlob(expandHome(pattern));
    const regex = compileGlob(segments, { dot: options.dot ?? false });
    const root = await this.#admit(base === "" ? "." : base, "glob", "glob", options);
    const matches: string[] = [];
    const state = { visits: 0, truncated: false };
    const consider = async (path: string, type: EntryType): Promise<void> => {
      const kind = type === "symlink" ? await this.#linkTarget(path) : type;
      if (kind === undefined) return; // dangling, looping or leading out: dropped
      if (kind === "directory" && !options.includeDirectories) return;
      if (matches.length >= limit) state.truncated = true;
      else matches.push(path);
    };
    const info = await lstatOrUndefined(root);
    if (info === undefined) return { paths: [], truncated: false };
    if (segments.length === 0) {
      await consider(root, entryType(info));
      return { paths: matches, truncated: false };
    }
    if (!info.isDirectory) return { paths: [], truncated: false };
    const pruneDot = !(options.dot ?? false) && !segments.some((s) => s.startsWith("."));
    const walk = async (dir: string, prefix: string, depth: number): Promise<void> => {
      options.signal?.throwIfAborted();
      let names: Deno.DirEntry[];
      try {
        names = await Array.fromAsync(Deno.readDir(dir));
      } catch {
        return; // vanished or unreadable: nothing to match below
      }
      names.sort((a, b) => compare(a.name, b.name));
      for (const entry of names) {
        if (state.truncated) return;
        if (++state.visits > this.#maxVisits) {
          state.truncated = true;
          return;
        }
        const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
        const path = join(dir, entry.name);
        if (regex.test(rel)) await consider(path, entryType(entry));
        const descend = entry.isDirectory && depth < maxDepth(segments) &&
          !(pruneDot && entry.name.startsWith("."));
        if (descend) await walk(path, rel, depth + 1);
      }
    };
    await osErrors(pattern, root, "glob", () => walk(root, "", 1));
    return { paths: matches, truncated: state.truncated };
  }

  /** Where a matched link leads, if it resolves to something inside the workspace. */
  async #linkTarget(path: string): Promise<EntryType | undefined> {
    try {
      const real = await resolveReal(path, this.#hops());
      if (!this.#readable().some((dir) => isInside(real, dir))) return undefined;
      const info = await lstatOrUndefined(real);
      return info === undefined ? undefined : entryType(info);
    } catch {
      return undefined;
    }
  }

  /** The workspace plus the read-only grants. */
  #readable(): readonly string[] {
    const readOnly = this.#readOnly();
    return readOnly.length === 0 ? this.#dirs : [...this.#dirs, ...readOnly];
  }

  async #contain(path: string, op: FsOp, action: string, options: FsCallOptions): Promise<string> {
    const contain = (dirs: readonly string[]): Promise<string> =>
      containPath(path, dirs, {
        action,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...this.#hops(),
      });
    if (op !== "write" && op !== "edit") return await contain(this.#readable());
    try {
      return await contain(this.#dirs);
    } catch (error) {
      const readOnly = this.#readOnly();
      if (readOnly.length === 0) throw error;
      const real = await contain(readOnly).catch(() => undefined);
      if (real === undefined) throw error;
      throw new TerretError(
        "Denied",
        `Cannot ${action} "${path}": it is in a read-only directory (${
          readOnly.find((dir) => isInside(real, dir))
        })`,
        { details: { path: real, op } },
      );
    }
  }

  async #admit(path: string, op: FsOp, action: string, options: FsCallOptions): Promise<string> {
    options.signal?.throwIfAborted();
    const real = await this.#contain(path, op, action, options);
    const request: FsAuthorizeRequest = Object.freeze({ op, path: real });
    let verdict: unknown;
    try {
      verdict = await this.#authorizer(request);
    } catch (error) {
      throw new TerretError(
        "Denied",
        `Cannot ${action} "${path}": the fs/authorize check failed (${(error as Error).message})`,
        { cause: error, details: { path: real, op } },
      );
    }
    if (!isAdmitted(verdict)) {
      const reason = (verdict as { reason?: unknown } | undefined)?.reason;
      throw new TerretError(
        "Denied",
        `Cannot ${action} "${path}": vetoed by policy${
          typeof reason === "string" ? ` (${reason})` : ""
        }`,
        { details: { path: real, op } },
      );
    }
    options.signal?.throwIfAborted();
    return real;
  }

  async #existing(path: string, real: string, action: string): Promise<Deno.FileInfo> {
    const info = await lstatOrUndefined(real);
    if (info === undefined) {
      throw new TerretError("NotFound", `Cannot ${action} "${path}": no such file or directory`, {
        details: { path: real },
      });
    }
    return info;
  }

  #tooLarge(path: string, real: string, bytes: number): TerretError {
    return new TerretError(
      "TooLarge",
      `Cannot edit "${path}": ${bytes} bytes is over the ${this.#maxRead}-byte limit`,
      { details: { path: real, bytes, limit: this.#maxRead } },
    );
  }

  #hops(): { maxHops?: number } {
    return this.#maxHops === undefined ? {} : { maxHops: this.#maxHops };
  }
}

function isAdmitted(verdict: unknown): boolean {
  return typeof verdict === "object" && verdict !== null &&
    (verdict as { allow?: unknown }).allow === true;
}

function decodeText(bytes: Uint8Array, path: string, action: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw new TerretError("NotText", `Cannot ${action} "${path}": it is not valid UTF-8 text`, {
      cause: error,
      details: { path },
    });
  }
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    found.push(at);
  }
  return found;
}

function checkUnique(path: string, count: number, replaceAll: boolean): void {
  if (count === 0) {
    throw new TerretError(
      "EditAmbiguous",
      `Cannot edit "${path}": the text to replace was not found`,
      {
        details: { path, occurrences: 0 },
      },
    );
  }
  if (count > 1 && !replaceAll) {
    throw new TerretError(
      "EditAmbiguous",
      `Cannot edit "${path}": the text to replace occurs ${count} times (add context to make it unique, or replace all)`,
      { details: { path, occurrences: count } },
    );
  }
}

function entryType(info: { isFile: boolean; isDirectory: boolean; isSymlink: boolean }): EntryType {
  return info.isSymlink
    ? "symlink"
    : info.isDirectory
    ? "directory"
    : info.isFile
    ? "file"
    : "other";
}

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`Cannot use ${name} ${value}: it must be a positive integer`);
  }
  return value;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`Cannot use ${name} ${value}: it must be a non-negative integer`);
  }
  return value;
}

/** Runs an operation on a contained path, turning OS errors into `TerretError`s naming the action. */
async function osErrors<T>(
  path: string,
  real: string,
  action: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TerretError || error instanceof TypeError || error instanceof RangeError) {
      throw error;
    }
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    const message = (error as Error).message;
    const [code, why]: [ExecErrorCode, string] = error instanceof Deno.errors.NotFound
      ? ["NotFound", "no such file or directory"]
      : error instanceof Deno.errors.NotADirectory
      ? ["NotADirectory", "a path component is not a directory"]
      : error instanceof Deno.errors.IsADirectory
      ? ["NotAFile", "it is a directory"]
      : error instanceof Deno.errors.PermissionDenied
      ? ["Denied", "permission denied by the operating system"]
      : ["IoError", message];
    throw new TerretError(code, `Cannot ${action} "${path}": ${why}`, {
      cause: error,
      details: { path: real },
    });
  }
}
