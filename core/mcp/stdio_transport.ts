/**
 * The MCP stdio transport over the `subprocess` seam: the server is spawned through `sandbox.wrap` like every other
 * program (the SDK's own `StdioClientTransport` spawns with `node:child_process` and would bypass the sandbox).
 *
 * @module
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ChildExit, ChildHandle, Subprocess } from "../seams/subprocess.ts";
import { TailLog } from "./_tail_log.ts";

/** Options of {@linkcode SubprocessStdioTransport}. */
export interface StdioTransportOptions {
  /** The server's argv (`[command, ...args]`). */
  readonly argv: readonly string[];
  /** The working directory (inside a granted workspace; the sandbox refuses anything else). */
  readonly cwd: string;
  /** Variables added to the subprocess seam's base environment; nothing else reaches the server. */
  readonly env?: Readonly<Record<string, string>>;
  /** Characters of stderr kept for diagnostics (default 16 KiB). */
  readonly stderrLimit?: number;
  /** The longest stdout line accepted as one message, in characters (default 16 MiB). */
  readonly maxMessageChars?: number;
  /** Milliseconds `close()` waits for the server to exit after its stdin closes, before killing it (default 2000). */
  readonly closeGraceMs?: number;
  /** Receives each stderr line, and each stdout line ignored as startup noise (prefixed `stdout: `). */
  readonly onDiagnostic?: (line: string) => void;
}

const ENCODER = new TextEncoder();
/** How long an exited server's stderr is read to its end before it is cut off (its process group is gone by then). */
const STDERR_DRAIN_MS = 5000;

/**
 * An MCP client `Transport` speaking newline-delimited JSON-RPC over a child's stdin/stdout, spawned through the
 * {@linkcode Subprocess} seam.
 *
 * Contract: `start()` spawns once (a second call throws); it rejects with the seam's error (`Denied`,
 * `SpawnFailed`) when the server cannot start. Stdout must carry JSON-RPC only: lines before the server's first
 * valid message that are not JSON-RPC are kept as startup noise (reported through `onDiagnostic`); after it, a
 * malformed line is a protocol violation that kills the server. Stderr is drained into a bounded log and never
 * taken as failure. `onclose` fires exactly once, whether the server exited, was killed or `close()` was called;
 * {@linkcode SubprocessStdioTransport.closeReason} then says why. `close()` ends stdin, waits up to the grace
 * period, then kills the process group; `kill()` skips the grace period. Neither throws.
 */
export class SubprocessStdioTransport implements Transport {
  /** Called once when the connection ends, for any reason. */
  onclose?: (() => void) | undefined;
  /** Called for out-of-band errors (a malformed message, a failed write). */
  onerror?: ((error: Error) => void) | undefined;
  /** Called with each JSON-RPC message the server sends. */
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  readonly #subprocess: Subprocess;
  readonly #options: StdioTransportOptions;
  readonly #stderr: TailLog;
  #child: ChildHandle | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #stdoutReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #stderrReader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #stderrDrained: Promise<void> = Promise.resolve();
  #started = false;
  #closed = false;
  #closing: Promise<void> | undefined;
  #reading: Promise<void> = Promise.resolve();
  #sawMessage = false;
  #closeReason: string | undefined;
  #exit: ChildExit | undefined;

  /**
   * @param subprocess the seam the server is spawned through
   * @param options what to spawn and how
   */
  constructor(subprocess: Subprocess, options: StdioTransportOptions) {
    if (options.argv.length === 0) throw new TypeError("Cannot spawn an MCP server: empty argv");
    this.#subprocess = subprocess;
    this.#options = options;
    this.#stderr = new TailLog(options.stderrLimit ?? 16 * 1024);
  }

  /** The server's host process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The most recent stderr output (bounded). */
  get stderr(): TailLog {
    return this.#stderr;
  }

  /** How the server process ended, once it has. */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  /** Why the connection ended (`exited with code 1`, `sent malformed JSON-RPC: …`), once it has. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** Spawns the server and starts reading its output. */
  async start(): Promise<void> {
    if (this.#started) throw new Error("Cannot start an MCP stdio transport twice");
    this.#started = true;
    const child = await this.#subprocess.spawn(this.#options.argv, {
      cwd: this.#options.cwd,
      env: { ...this.#options.env },
      stdin: "piped",
      stderr: "piped",
    });
    this.#child = child;
    this.#writer = child.stdin!.getWriter();
    this.#writer.closed.catch(() => {}); // a dead server's stdin rejects; send() reports it
    this.#stdoutReader = child.stdout.getReader();
    if (child.stderr !== null) {
      this.#stderrReader = child.stderr.getReader();
      this.#stderrDrained = this.#drainStderr(this.#stderrReader);
    }
    this.#reading = this.#readStdout(this.#stdoutReader, child);
  }

  /** Writes one message as a line on the server's stdin. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || this.#writer === undefined) {
      throw new Error(`Cannot send to the MCP server: ${this.#closeReason ?? "not connected"}`);
    }
    try {
      await this.#writer.write(ENCODER.encode(JSON.stringify(message) + "\n"));
    } catch (error) {
      // A broken pipe means the server is gone: say how it ended once its stdout closes (bounded wait).
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.#reading,
        new Promise((resolve) => timer = setTimeout(resolve, 1000)),
      ]);
      clearTimeout(timer);
      if (this.#closeReason !== undefined) throw new Error(this.#closeReason);
      throw error;
    }
  }

  /** Ends the server's stdin, waits up to the grace period for it to exit, then kills its process group. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown(true, "closed by the client");
    return this.#closing;
  }

  /** Kills the server's process group at once (a wedged or misbehaving server); records `reason`. */
  kill(reason: string): Promise<void> {
    this.#closing ??= this.#shutdown(false, reason);
    return this.#closing;
  }

  async #shutdown(graceful: boolean, reason: string): Promise<void> {
    this.#closeReason ??= reason;
    const child = this.#child;
    if (child !== undefined) {
      if (graceful) {
        await this.#writer?.close().catch(() => {});
        const grace = this.#options.closeGraceMs ?? 2000;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const exited = await Promise.race([
          child.status.then(() => true),
          new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), grace)),
        ]);
        clearTimeout(timer);
        if (!exited) await child.kill();
      } else {
        await child.kill();
      }
      this.#exit = await child.status;
      await this.#stdoutReader?.cancel().catch(() => {});
      await this.#stderrReader?.cancel().catch(() => {});
      await this.#reading;
    }
    this.#finish();
  }

  async #readStdout(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    child: ChildHandle,
  ): Promise<void> {
    const decoder = new TextDecoder();
    const limit = this.#options.maxMessageChars ?? 16 * 1024 * 1024;
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (!this.#line(line)) return;
        }
        if (buffer.length > limit) {
          this.#violation(`sent a message longer than ${limit} characters`);
          return;
        }
      }
    } catch (error) {
      if (this.#closing === undefined) this.onerror?.(error as Error);
    }
    if (this.#closing !== undefined) return;
    // Stdout ended: the server exited (or closed stdout, which is as good as exiting).
    const exit = await child.status;
    this.#exit = exit;
    // What it said last (why it exited) is often still in the pipe: read stderr to its end (bounded).
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#stderrDrained,
      new Promise((resolve) => timer = setTimeout(resolve, STDERR_DRAIN_MS)),
    ]);
    clearTimeout(timer);
    this.#closeReason ??= describeExit(exit, this.#stderr);
    await this.#stderrReader?.cancel().catch(() => {});
    this.#finish();
  }

  /** Handles one stdout line; false when it ended the connection. */
  #line(raw: string): boolean {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim().length === 0) return true;
    let parsed: unknown;
    let valid = false;
    try {
      parsed = JSON.parse(line);
      valid = JSONRPCMessageSchema.safeParse(parsed).success;
    } catch {
      valid = false;
    }
    if (!valid) {
      if (!this.#sawMessage) {
        this.#options.onDiagnostic?.(`stdout: ${line}`);
        return true;
      }
      this.#violation(`sent malformed JSON-RPC: ${snippet(line)}`);
      return false;
    }
    this.#sawMessage = true;
    this.onmessage?.(parsed as JSONRPCMessage);
    return true;
  }

  #violation(reason: string): void {
    this.onerror?.(new Error(`The MCP server ${reason}`));
    void this.kill(reason);
  }

  async #drainStderr(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        this.#stderr.append(text);
        if (this.#options.onDiagnostic === undefined) continue;
        pending += text;
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) if (line.trim() !== "") this.#options.onDiagnostic(line);
        if (pending.length > 4096) {
          this.#options.onDiagnostic(pending);
          pending = "";
        }
      }
    } catch {
      // Cancelled at close.
    }
    if (pending.trim() !== "") this.#options.onDiagnostic?.(pending);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

/** Describes how a server process ended, with the tail of its stderr. */
function describeExit(exit: ChildExit, stderr: TailLog): string {
  const how = exit.signal !== null
    ? `was killed by ${exit.signal}`
    : `exited with code ${exit.code}`;
  const tail = stderr.lastLines(3);
  return tail === "" ? how : `${how} (stderr: ${snippet(tail)})`;
}

function snippet(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
