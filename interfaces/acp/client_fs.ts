/**
 * The `fs` seam through the editor: with `fs.readTextFile`/`fs.writeTextFile` offered by the client and allowed by
 * the `interfaces.acp` row, file text is read from and written to the editor's buffers (unsaved changes are seen,
 * edits show in the editor), after Terret's own containment and `fs/authorize`.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Context, Disposer } from "@terret/hames";
import type { Agent } from "@terret/core";
import {
  containPath,
  type EditOptions,
  type EditResult,
  type FileStat,
  type FileSystem,
  FsAuthorize,
  type FsCallOptions,
  FsKey,
  type FsOp,
  type GlobOptions,
  type GlobResult,
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type WriteOptions,
  type WriteResult,
} from "@terret/exec/fs";

/** The editor's side of file access, for one session. */
export interface EditorFiles {
  /** `fs/read_text_file` of a real, contained path (present when the client offers it). */
  readonly read?: (path: string, signal?: AbortSignal) => Promise<string>;
  /** `fs/write_text_file` of a real, contained path (present when the client offers it). */
  readonly write?: (path: string, content: string, signal?: AbortSignal) => Promise<void>;
}

const encoder = new TextEncoder();

/**
 * A {@linkcode FileSystem} whose text reads and writes go to the editor, over the host's `fs` for everything else.
 *
 * Contract: every path is contained (realpath, the granted directories) and passes `fs/authorize` on the agent's
 * context BEFORE the editor is asked, so a path outside the workspace or a vetoed one never reaches the client
 * (the same `Denied` the host's `fs` gives). `stat` of a file reports the size of the editor's text; `readBytes`
 * slices it. Binary writes, `list`, `glob` and everything without the matching capability use the host's `fs`. A
 * client that fails a request fails the operation with its message; nothing falls back to the disk silently.
 */
export class ClientFileSystem implements FileSystem {
  readonly #inner: FileSystem;
  readonly #ctx: Context;
  readonly #editor: EditorFiles;
  /** The editor's text per real path, from the last `stat`/read, until the next write or stat. */
  readonly #texts = new Map<string, Uint8Array>();

  /**
   * @param inner the host's `fs` (containment, the disk)
   * @param ctx the agent's context (`fs/authorize` is dispatched on it)
   * @param editor the client's file methods
   */
  constructor(inner: FileSystem, ctx: Context, editor: EditorFiles) {
    this.#inner = inner;
    this.#ctx = ctx;
    this.#editor = editor;
  }

  get dirs(): readonly string[] {
    return this.#inner.dirs;
  }

  async stat(path: string, options: FsCallOptions = {}): Promise<FileStat> {
    const stat = await this.#inner.stat(path, options);
    if (this.#editor.read === undefined || stat.type !== "file") return stat;
    const bytes = await this.#fetch(path, stat.path, "read", options);
    return { ...stat, size: bytes.length };
  }

  async readBytes(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    if (this.#editor.read === undefined) return await this.#inner.readBytes(path, options);
    const real = await this.#admit(path, "read", "read", options);
    const bytes = this.#texts.get(real) ?? await this.#fetch(path, real, "read", options, false);
    const from = Math.min(options.offset ?? 0, bytes.length);
    const to = Math.min(
      bytes.length,
      options.length === undefined ? Infinity : from + options.length,
    );
    if (options.maxBytes !== undefined && to - from > options.maxBytes) {
      throw new RangeError(
        `Cannot read "${path}": ${to - from} bytes is over the ${options.maxBytes}-byte limit`,
      );
    }
    if (to >= bytes.length) this.#texts.delete(real);
    return bytes.slice(from, to);
  }

  async read(path: string, options: ReadOptions = {}): Promise<string> {
    if (this.#editor.read === undefined) return await this.#inner.read(path, options);
    const real = await this.#admit(path, "read", "read", options);
    return await this.#editor.read(real, options.signal);
  }

  async write(
    path: string,
    content: string | Uint8Array,
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    if (this.#editor.write === undefined || typeof content !== "string") {
      return await this.#inner.write(path, content, options);
    }
    const real = await this.#admit(path, "write", "write", options);
    const created = await this.#inner.stat(real, options).then(() => false, () => true);
    this.#texts.delete(real);
    await this.#editor.write(real, content, options.signal);
    return { path: real, bytes: encoder.encode(content).length, created };
  }

  async edit(
    path: string,
    oldText: string,
    newText: string,
    options: EditOptions = {},
  ): Promise<EditResult> {
    if (this.#editor.write === undefined) {
      return await this.#inner.edit(path, oldText, newText, options);
    }
    const real = await this.#admit(path, "edit", "edit", options);
    const text = this.#editor.read === undefined
      ? await this.#inner.read(real, options)
      : await this.#editor.read(real, options.signal);
    const count = text.split(oldText).length - 1;
    if (oldText === "" || count === 0) {
      throw new Error(`Cannot edit "${path}": the text to replace was not found`);
    }
    if (count > 1 && options.replaceAll !== true) {
      throw new Error(
        `Cannot edit "${path}": the text to replace occurs ${count} times (add context to make it unique, or ` +
          "replace all)",
      );
    }
    const next = options.replaceAll === true
      ? text.split(oldText).join(newText)
      : text.replace(oldText, () => newText);
    this.#texts.delete(real);
    await this.#editor.write(real, next, options.signal);
    return { path: real, replacements: options.replaceAll === true ? count : 1 };
  }

  list(path: string, options?: ListOptions): Promise<ListResult> {
    return this.#inner.list(path, options);
  }

  glob(pattern: string, options?: GlobOptions): Promise<GlobResult> {
    return this.#inner.glob(pattern, options);
  }

  async #fetch(
    path: string,
    real: string,
    op: FsOp,
    options: FsCallOptions,
    admit = true,
  ): Promise<Uint8Array> {
    if (admit) await this.#authorize(path, real, op, op);
    const bytes = encoder.encode(await this.#editor.read!(real, options.signal));
    this.#texts.set(real, bytes);
    return bytes;
  }

  /** Containment, then `fs/authorize`: the real path the editor may be asked about. */
  async #admit(path: string, op: FsOp, action: string, options: FsCallOptions): Promise<string> {
    options.signal?.throwIfAborted();
    const real = await containPath(path, this.dirs, {
      action,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    await this.#authorize(path, real, op, action);
    return real;
  }

  async #authorize(path: string, real: string, op: FsOp, action: string): Promise<void> {
    let verdict: unknown;
    try {
      verdict = await this.#ctx.waterfall(FsAuthorize, { op, path: real }, () => ({ allow: true }));
    } catch (error) {
      throw new Error(
        `Cannot ${action} "${path}": the fs/authorize check failed (${(error as Error).message})`,
      );
    }
    if ((verdict as { allow?: unknown } | undefined)?.allow !== true) {
      const reason = (verdict as { reason?: unknown } | undefined)?.reason;
      throw new Error(
        `Cannot ${action} "${path}": vetoed by policy${
          typeof reason === "string" ? ` (${reason})` : ""
        }`,
      );
    }
  }
}

/**
 * The editor's file methods for one session, over the client connection: only those the client advertised.
 * `undefined` when it advertised neither.
 */
export function editorFiles(
  client: acp.AgentContext,
  sessionId: string,
  capabilities: acp.FileSystemCapabilities | undefined,
): EditorFiles | undefined {
  const canRead = capabilities?.readTextFile === true;
  const canWrite = capabilities?.writeTextFile === true;
  if (!canRead && !canWrite) return undefined;
  const options = (signal?: AbortSignal) =>
    signal === undefined ? undefined : { cancellationSignal: signal };
  return {
    ...(canRead
      ? {
        read: async (path: string, signal?: AbortSignal) =>
          (await client.request(
            acp.methods.client.fs.readTextFile,
            { sessionId, path },
            options(signal),
          )).content,
      }
      : {}),
    ...(canWrite
      ? {
        write: async (path: string, content: string, signal?: AbortSignal) => {
          await client.request(
            acp.methods.client.fs.writeTextFile,
            { sessionId, path, content },
            options(signal),
          );
        },
      }
      : {}),
  };
}

/**
 * Provides a {@linkcode ClientFileSystem} as the `fs` of `agent`'s context (over the `fs` it inherits), so its
 * Read, Write and Edit go through the editor. `undefined` when the host has no `fs`.
 */
export function attachEditorFiles(agent: Agent, editor: EditorFiles): Disposer | undefined {
  const inner = agent.ctx.maybe(FsKey);
  if (inner === undefined) return undefined;
  return agent.ctx.provide(FsKey, new ClientFileSystem(inner, agent.ctx, editor));
}
