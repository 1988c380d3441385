/**
 * The `fs` seam: workspace-contained file access for tools, and the `fs/authorize` waterfall every operation
 * passes after containment.
 *
 * @module
 */
import { defineEvent, defineService, type EventDefinition, type ServiceKey } from "@terret/hames";
import { z } from "zod";

/** The operations {@linkcode FsAuthorize} names. `readBytes` is a `read`. */
export type FsOp = "read" | "write" | "edit" | "stat" | "list" | "glob";

/** Options every `fs` call accepts. */
export interface FsCallOptions {
  /** Absolute directory a relative path is resolved against (default: the first granted directory). */
  readonly cwd?: string;
  /** Cancels the operation between steps. */
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode FileSystem.read} and {@linkcode FileSystem.readBytes}. */
export interface ReadOptions extends FsCallOptions {
  /** Refuse (`TooLarge`) when more than this many bytes would be read (default: the row's `max_read_bytes`). */
  readonly maxBytes?: number;
  /** Byte offset to start at (default 0). */
  readonly offset?: number;
  /** Bytes to read from `offset` (default: to the end of the file). */
  readonly length?: number;
}

/** Options for {@linkcode FileSystem.write}. */
export interface WriteOptions extends FsCallOptions {
  /** Create missing parent directories (default true). */
  readonly createParents?: boolean;
}

/** What {@linkcode FileSystem.write} did. */
export interface WriteResult {
  /** The real path written. */
  readonly path: string;
  /** Bytes written. */
  readonly bytes: number;
  /** True when the file did not exist before. */
  readonly created: boolean;
}

/** Options for {@linkcode FileSystem.edit}. */
export interface EditOptions extends FsCallOptions {
  /** Replace every occurrence instead of requiring exactly one (default false). */
  readonly replaceAll?: boolean;
}

/** What {@linkcode FileSystem.edit} did. */
export interface EditResult {
  /** The real path edited. */
  readonly path: string;
  /** How many occurrences were replaced. */
  readonly replacements: number;
}

/** The kind of a file system entry. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** What {@linkcode FileSystem.stat} reports (about the real target). */
export interface FileStat {
  /** The real path. */
  readonly path: string;
  readonly type: EntryType;
  /** Size in bytes. */
  readonly size: number;
  /** Last modification, in milliseconds since the epoch (null where the platform has none). */
  readonly mtime: number | null;
  /** Permission bits (null where the platform has none). */
  readonly mode: number | null;
}

/** One entry of {@linkcode FileSystem.list}. */
export interface DirEntry {
  readonly name: string;
  /** The entry's path (the listed real directory joined with `name`; a symlink is not followed). */
  readonly path: string;
  readonly type: EntryType;
}

/** Options for {@linkcode FileSystem.list}. */
export interface ListOptions extends FsCallOptions {
  /** At most this many entries, by name (default 10,000). */
  readonly limit?: number;
}

/** What {@linkcode FileSystem.list} returns. */
export interface ListResult {
  /** Entries sorted by name. */
  readonly entries: readonly DirEntry[];
  /** True when `limit` cut the listing short. */
  readonly truncated: boolean;
}

/** Options for {@linkcode FileSystem.glob}. */
export interface GlobOptions extends FsCallOptions {
  /** At most this many matches (default 10,000). */
  readonly limit?: number;
  /** Let `*`, `?` and `**` match names starting with `.` (default false; a pattern segment starting with `.` always can). */
  readonly dot?: boolean;
  /** Include matching directories, not only files (default false). */
  readonly includeDirectories?: boolean;
}

/** What {@linkcode FileSystem.glob} returns. */
export interface GlobResult {
  /** Matching paths, in sorted depth-first order. */
  readonly paths: readonly string[];
  /** True when `limit` (or the walk bound) cut the search short. */
  readonly truncated: boolean;
}

/**
 * File access for tools, contained to the granted workspace.
 *
 * Contract: every path is expanded, resolved through its real location (symbolic links followed, a hop cap turning a
 * loop into `Denied`) and must land inside a granted directory (trailing-separator guard); `..` traversal, links
 * leading out, dangling links whose target is outside and an empty workspace list all fail closed with `Denied`.
 * The operation then runs on the real path, after {@linkcode FsAuthorize} admitted it; the leaf open is checked
 * against the identity seen before it (a link swapped in after the check is `Denied`, not followed). Failures are
 * `TerretError`s: `Denied`, `NotFound`, `NotAFile`, `NotADirectory`, `TooLarge`, `NotText`, `EditAmbiguous`;
 * misuse (an empty path, a bad range) is a `TypeError`/`RangeError`. Nothing here spawns a process.
 */
export interface FileSystem {
  /** The granted real directories. */
  readonly dirs: readonly string[];
  /** Reads a UTF-8 text file (capped; `NotText` when the bytes are not valid UTF-8). */
  read(path: string, options?: ReadOptions): Promise<string>;
  /** Reads a file's bytes (capped). */
  readBytes(path: string, options?: ReadOptions): Promise<Uint8Array>;
  /** Creates or replaces a file's content. */
  write(path: string, content: string | Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  /** Replaces `oldText` with `newText`: exactly one occurrence unless `replaceAll` (else `EditAmbiguous`). */
  edit(path: string, oldText: string, newText: string, options?: EditOptions): Promise<EditResult>;
  /** Describes the real target of a path. */
  stat(path: string, options?: FsCallOptions): Promise<FileStat>;
  /** Lists a directory. */
  list(path: string, options?: ListOptions): Promise<ListResult>;
  /** Finds paths matching a glob (`*`, `?`, `**`, `[…]`, `{a,b}`), relative to `cwd` unless absolute. */
  glob(pattern: string, options?: GlobOptions): Promise<GlobResult>;
}

/** The `fs` service key (config row `fs`). */
export const FsKey: ServiceKey<FileSystem> = defineService<FileSystem>(
  "fs",
  "Workspace-contained file access (read, write, edit, stat, list, glob)",
);

/** Payload of {@linkcode FsAuthorize}. */
export interface FsAuthorizeRequest {
  readonly op: FsOp;
  /** The real, contained path the operation will touch. */
  readonly path: string;
}

/** What the {@linkcode FsAuthorize} chain returns: admitted, or vetoed with a reason. */
export type FsVerdict =
  | { readonly allow: true }
  | { readonly allow: false; readonly reason?: string };

const verdict = z.union([
  z.object({ allow: z.literal(true) }),
  z.object({ allow: z.literal(false), reason: z.string().optional() }),
]);

/**
 * Dispatched by the `fs` seam for every operation that passed containment, before it runs.
 *
 * `list` and `glob` are asked once, for the (real) directory they read; a `glob` then keeps only entries whose real
 * path is inside the workspace.
 *
 * Contract: a listener may admit (`next()`, or return `{allow: true}`) or veto (return `{allow: false, reason}`
 * without calling `next`). It cannot redirect: a rewritten `path` passed to `next` is ignored, and the operation
 * runs on the path that was contained. A throwing listener, or a chain returning anything but `{allow: true}`,
 * vetoes (fail closed). A veto surfaces as `TerretError` `Denied`.
 */
export const FsAuthorize: EventDefinition<
  "waterfall",
  FsAuthorizeRequest,
  FsVerdict | Promise<FsVerdict>
> = defineEvent("fs/authorize", {
  mode: "waterfall",
  owner: "@terret/exec",
  description:
    "An fs operation passed containment; listeners may veto ({allow: false, reason}) or admit, never redirect.",
  payload: z.object({
    op: z.enum(["read", "write", "edit", "stat", "list", "glob"]),
    path: z.string(),
  }),
  result: verdict as z.ZodType<FsVerdict | Promise<FsVerdict>>,
});
