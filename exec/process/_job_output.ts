/**
 * A background job's output file: stdout and stderr appended in arrival order, capped. Past the cap the file is
 * rewritten to its newest half behind a `[… N bytes dropped …]` line, so it never grows past the cap and always
 * ends with the newest output (a ring on disk).
 *
 * @module
 */

/** The line that opens a file whose oldest bytes were dropped. */
export function droppedLine(dropped: number): string {
  return `[… ${dropped} bytes dropped …]\n`;
}

/** One job's output file. Writes are serialized; `close` waits for them. */
export class JobOutput {
  readonly #path: string;
  readonly #max: number;
  #file: Deno.FsFile;
  /** Bytes of output in the file (after the dropped-bytes line, when there is one). */
  #size = 0;
  /** Bytes of the dropped-bytes line at the top of the file (0 until the first rotation). */
  #marker = 0;
  #written = 0;
  #dropped = 0;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  #failure: unknown;

  private constructor(path: string, file: Deno.FsFile, max: number) {
    this.#path = path;
    this.#file = file;
    this.#max = max;
  }

  /** Creates the file (it must not exist) readable by its owner only. */
  static async create(path: string, maxBytes: number): Promise<JobOutput> {
    if (!Number.isInteger(maxBytes) || maxBytes < 64) {
      throw new RangeError(`Cannot cap job output at ${maxBytes} bytes: expected an integer >= 64`);
    }
    const file = await Deno.open(path, { createNew: true, write: true, append: true, mode: 0o600 });
    return new JobOutput(path, file, maxBytes);
  }

  /** Bytes the job has written in total. */
  get written(): number {
    return this.#written;
  }

  /** Bytes dropped from the front of the file by the cap. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The first failure to write (the file is left as it was then), or undefined. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Appends a chunk (copied); resolves once it is in the file. Never rejects: a failure is kept in `failure`. */
  write(chunk: Uint8Array): Promise<void> {
    if (this.#closed || chunk.length === 0) return this.#queue;
    const copy = chunk.slice();
    this.#queue = this.#queue.then(() => this.#append(copy)).catch((error) => {
      this.#failure ??= error;
    });
    return this.#queue;
  }

  /** Waits for pending writes and closes the file. Idempotent. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#queue = this.#queue.then(() => this.#file.close()).catch(() => {});
    }
    await this.#queue;
  }

  async #append(chunk: Uint8Array): Promise<void> {
    if (this.#failure !== undefined) return;
    this.#written += chunk.length;
    if (this.#marker + this.#size + chunk.length <= this.#max) {
      await writeAll(this.#file, chunk);
      this.#size += chunk.length;
      return;
    }
    await this.#rotate(chunk);
  }

  /** Rewrites the file as the dropped line plus the newest half of (file + chunk). */
  async #rotate(chunk: Uint8Array): Promise<void> {
    const keep = Math.floor(this.#max / 2);
    const fromChunk = Math.min(chunk.length, keep);
    const fromFile = Math.min(this.#size, keep - fromChunk);
    const tail = new Uint8Array(fromFile + fromChunk);
    if (fromFile > 0) {
      const reader = await Deno.open(this.#path, { read: true });
      try {
        await reader.seek(-fromFile, Deno.SeekMode.End);
        let offset = 0;
        while (offset < fromFile) {
          const n = await reader.read(tail.subarray(offset, fromFile));
          if (n === null) break;
          offset += n;
        }
      } finally {
        reader.close();
      }
    }
    tail.set(chunk.subarray(chunk.length - fromChunk), fromFile);
    let start = 0;
    while (start < tail.length && start < 3 && (tail[start]! & 0xc0) === 0x80) start++;
    this.#dropped += this.#size + chunk.length - tail.length + start;
    // The file's last `fromFile` bytes are output (never the dropped-bytes line): `fromFile <= #size`.
    const body = tail.subarray(start);
    const head = new TextEncoder().encode(droppedLine(this.#dropped));
    const temporary = `${this.#path}.rotate`;
    const next = await Deno.open(temporary, {
      create: true,
      truncate: true,
      write: true,
      mode: 0o600,
    });
    try {
      await writeAll(next, head);
      await writeAll(next, body);
    } catch (error) {
      next.close();
      throw error;
    }
    await Deno.rename(temporary, this.#path);
    this.#file.close();
    this.#file = next;
    this.#size = body.length;
    this.#marker = head.length;
  }
}

/** Reads `stream` into `output` until EOF, a failure or `cancel()`. */
export function drainInto(
  stream: ReadableStream<Uint8Array>,
  output: JobOutput,
): { done: Promise<void>; cancel(): Promise<void> } {
  const reader = stream.getReader();
  let finished = false;
  const done = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await output.write(value);
      }
    } catch {
      // A cancelled or failed pipe ends the drain; what was read is kept.
    } finally {
      finished = true;
    }
  })();
  return {
    done,
    async cancel() {
      if (!finished) await reader.cancel().catch(() => {});
      await done;
    },
  };
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}
