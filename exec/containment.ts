/**
 * Realpath-based containment: the one check the `fs` seam and the sandbox providers share. A path is expanded,
 * resolved component by component the way the kernel would (following every symbolic link, with a hop cap), and
 * must land inside a granted workspace directory.
 *
 * @module
 */
import { TerretError } from "./errors.ts";
import { dirname, isAbsolute, join, normalize } from "node:path";
import { isInside } from "./paths.ts";

/** The symbolic-link hop cap used when none is configured (the kernel's own `ELOOP` limit is 40). */
export const DEFAULT_MAX_SYMLINK_HOPS = 40;

const KERNEL_MAX_SYMLINKS = 40;

/** Options for {@linkcode resolveReal}. */
export interface ResolveRealOptions {
  /** How many symbolic links may be followed before giving up (default {@linkcode DEFAULT_MAX_SYMLINK_HOPS}). */
  readonly maxHops?: number;
}

/**
 * Resolves an absolute path to its real location: the real path of its deepest existing prefix, joined with the
 * components that do not exist yet. Symbolic links are followed wherever they appear, including a dangling link
 * at the leaf (resolved to where it points, so writing through it cannot land somewhere unchecked), and `..` is
 * applied to the real directory, as the kernel does.
 *
 * @throws {TerretError} `Denied` when more than `maxHops` symbolic links are followed (a loop), or when a
 *   component cannot be inspected (permission denied)
 * @throws {TypeError} when `path` is not absolute
 */
export async function resolveReal(path: string, options: ResolveRealOptions = {}): Promise<string> {
  if (!isAbsolute(path)) throw new TypeError(`Cannot resolve "${path}": the path is not absolute`);
  const maxHops = options.maxHops ?? DEFAULT_MAX_SYMLINK_HOPS;
  // Fast path: for a path that exists, the kernel's realpath is the same resolution in one call (its own cap is 40
  // links, so it is used only when the configured cap is not lower). Anything else takes the walk below.
  if (maxHops >= KERNEL_MAX_SYMLINKS) {
    try {
      return await Deno.realPath(path);
    } catch {
      // missing, dangling, a loop or unreadable: the walk says which
    }
  }
  let hops = 0;
  let pending = components(path);
  let resolved = "/";
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === "..") {
      resolved = dirname(resolved);
      continue;
    }
    const candidate = join(resolved, part);
    const info = await lstatOrMissing(candidate, path);
    if (info === undefined) {
      // Nothing exists from here on. A `..` further down would climb back into existing directories, whose
      // links must be resolved too: apply it lexically and resolve the result again. Each restart removes every
      // `..` that is not introduced by a (counted) link, so this terminates.
      if (!pending.includes("..")) return join(candidate, ...pending);
      pending = components(normalize(join(candidate, ...pending)));
      resolved = "/";
      continue;
    }
    if (!info.isSymlink) {
      resolved = candidate;
      continue;
    }
    hops += 1;
    if (hops > maxHops) {
      throw new TerretError(
        "Denied",
        `Cannot resolve "${path}": more than ${maxHops} symbolic links (a loop?)`,
        { details: { path, max_hops: maxHops } },
      );
    }
    const target = await Deno.readLink(candidate);
    if (isAbsolute(target)) resolved = "/";
    pending = [...components(target), ...pending];
  }
  return resolved;
}

/** Options for {@linkcode containPath}. */
export interface ContainOptions extends ResolveRealOptions {
  /** The directory a relative path is resolved against (default: the first granted directory). */
  readonly cwd?: string;
  /** The failed action for error messages: `Cannot <action> "<path>": …` (default `"access"`). */
  readonly action?: string;
}

/**
 * Expands `path` (`~`, relative to `cwd`), resolves it with {@linkcode resolveReal}, and returns the real path when
 * it lies inside one of `dirs` (real, absolute directories) with the trailing-separator guard.
 *
 * Contract: fails closed. An empty `dirs` denies everything; `..` traversal, a symbolic link leading out (followed
 * to its target, even a target that does not exist yet) and a link loop are all `Denied`. Callers must operate on
 * the returned real path, never on `path`, so that what was checked is what is touched.
 *
 * @throws {TerretError} `Denied` with the reason in the message
 * @throws {TypeError} when `path` is empty or holds a NUL byte
 */
export async function containPath(
  path: string,
  dirs: readonly string[],
  options: ContainOptions = {},
): Promise<string> {
  const action = options.action ?? "access";
  if (typeof path !== "string" || path.length === 0) {
    throw new TypeError(`Cannot ${action} a path: the path must be a non-empty string`);
  }
  if (path.includes("\0")) {
    throw new TypeError(`Cannot ${action} "${path}": the path holds a NUL byte`);
  }
  if (dirs.length === 0) {
    throw new TerretError("Denied", `Cannot ${action} "${path}": no workspace is granted`, {
      details: { path },
    });
  }
  if (options.cwd !== undefined && !isAbsolute(options.cwd)) {
    throw new TypeError(`Cannot ${action} "${path}": the cwd "${options.cwd}" is not absolute`);
  }
  // Not `resolve()`: it would apply `..` lexically, before the links it climbs out of are followed.
  const expanded = expandHome(path);
  const absolute = isAbsolute(expanded) ? expanded : `${options.cwd ?? dirs[0]!}/${expanded}`;
  let real: string;
  try {
    real = await resolveReal(absolute, options);
  } catch (error) {
    if (error instanceof TerretError) {
      throw new TerretError("Denied", `Cannot ${action} "${path}": ${reason(error.message)}`, {
        cause: error,
        details: { path },
      });
    }
    throw error;
  }
  if (!dirs.some((dir) => isInside(real, dir))) {
    const via = real === absolute ? "" : ` (it resolves to "${real}")`;
    throw new TerretError(
      "Denied",
      `Cannot ${action} "${path}": outside the granted workspaces${via}`,
      { details: { path, real } },
    );
  }
  return real;
}

/** Expands a leading `~` to `$HOME` when it is set (and readable). */
export function expandHome(path: string): string {
  if (path !== "~" && !path.startsWith("~/")) return path;
  let home: string | undefined;
  try {
    home = Deno.env.get("HOME");
  } catch {
    home = undefined;
  }
  if (!home) return path;
  return path === "~" ? home : `${home}${path.slice(1)}`;
}

function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

async function lstatOrMissing(candidate: string, path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(candidate);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    if (error instanceof Deno.errors.FilesystemLoop) {
      throw new TerretError("Denied", `Cannot resolve "${path}": too many symbolic links`, {
        cause: error,
      });
    }
    throw new TerretError(
      "Denied",
      `Cannot resolve "${path}": cannot inspect "${candidate}" (${(error as Error).message})`,
      { cause: error },
    );
  }
}

function reason(message: string): string {
  const colon = message.indexOf(": ");
  return colon === -1 ? message : message.slice(colon + 2);
}
