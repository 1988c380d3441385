/**
 * A sparse line index of one JSONL session file, so a read starts near its first seq instead of at byte 0. Internal
 * to the JSONL store.
 *
 * @module
 */
import { checkSignal, storeCorrupt } from "./_store_support.ts";

/** One mark every this many lines: the byte offset of lines 1, 257, 513, … */
export const LINES_PER_MARK = 256;
/** The most bytes one catch-up read takes at once (doubled for a longer line). */
const CATCH_UP_CHUNK = 1024 * 1024;
const NEWLINE = 10;

/** A byte range of whole lines: `[start, end)`, holding the `count` lines from seq `first`. */
export interface LineWindow {
  readonly start: number;
  readonly end: number;
  readonly first: number;
  readonly count: number;
}

/**
 * The byte offset of every {@linkcode LINES_PER_MARK}-th complete line of a file, and where its complete lines end.
 * Line n holds seq n. It only grows: lines are added as they are found (a catch-up) or written (a commit), and a
 * torn tail (bytes after the last newline) is never indexed, so cutting it leaves the index true.
 */
export class LineIndex {
  readonly #marks: number[] = [];
  #lines = 0;
  #end = 0;

  /** The complete lines indexed. */
  get lines(): number {
    return this.#lines;
  }

  /** The byte offset just past the last complete line indexed. */
  get end(): number {
    return this.#end;
  }

  /** Indexes the complete lines at the start of `bytes`, which must begin at {@linkcode end}; returns the bytes taken. */
  add(bytes: Uint8Array): number {
    let at = 0;
    for (let newline = bytes.indexOf(NEWLINE); newline >= 0; newline = bytes.indexOf(NEWLINE, at)) {
      if (this.#lines % LINES_PER_MARK === 0) this.#marks.push(this.#end + at);
      this.#lines++;
      at = newline + 1;
    }
    this.#end += at;
    return at;
  }

  /**
   * The window to read for the lines from seq `from`: it starts at the mark at or before `from` and spans whole marks
   * until it covers `want` lines from `from`, or `maxBytes` (at least one mark's lines), or the index's end.
   * `undefined` when `from` is past the last indexed line.
   */
  window(from: number, want: number, maxBytes: number): LineWindow | undefined {
    if (from > this.#lines) return undefined;
    const marks = this.#marks;
    const block = Math.floor((from - 1) / LINES_PER_MARK);
    const first = block * LINES_PER_MARK + 1;
    const start = marks[block]!;
    const needed = from - first + want;
    let next = block + 1;
    while (
      next < marks.length && next * LINES_PER_MARK - first + 1 < needed &&
      marks[next]! - start < maxBytes
    ) next++;
    return next < marks.length
      ? { start, end: marks[next]!, first, count: (next - block) * LINES_PER_MARK }
      : { start, end: this.#end, first, count: this.#lines - first + 1 };
  }
}

/**
 * Indexes the complete lines of `file` past `index.end`, reading asynchronously from `index.end` to the size the
 * file had when this began. Lines written after that are left to {@linkcode catchUpSync}.
 */
export async function catchUp(
  file: Deno.FsFile,
  index: LineIndex,
  size: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  let chunk = CATCH_UP_CHUNK;
  while (index.end < size) {
    const bytes = new Uint8Array(Math.min(chunk, size - index.end));
    await file.seek(index.end, Deno.SeekMode.Start);
    const read = await readFull(file, bytes);
    checkSignal(signal);
    const taken = index.add(bytes.subarray(0, read));
    if (read < bytes.length) return; // the file shrank under us: the next read's size check sees it
    if (taken === 0) {
      if (index.end + read >= size) return; // a torn tail: no newline before the end
      chunk *= 2; // one line longer than the chunk
    }
  }
}

/** Indexes, synchronously, the complete lines of `file` past `index.end` up to its current size. */
export function catchUpSync(file: Deno.FsFile, index: LineIndex): void {
  const size = file.statSync().size;
  if (size <= index.end) return;
  const bytes = new Uint8Array(size - index.end);
  file.seekSync(index.end, Deno.SeekMode.Start);
  let read = 0;
  while (read < bytes.length) {
    const n = file.readSync(bytes.subarray(read));
    if (n === null) break;
    read += n;
  }
  index.add(bytes.subarray(0, read));
}

/**
 * Reads `window`'s bytes from `file`, with the byte before it, to check that the window still starts and ends at line
 * ends.
 *
 * @throws {TerretError} `StoreCorrupt` naming `store` when it does not: the file was changed other than by appends
 * since it was indexed (the caller then indexes it afresh)
 */
export async function readWindow(
  file: Deno.FsFile,
  window: LineWindow,
  store: string,
): Promise<Uint8Array> {
  const before = window.start > 0 ? 1 : 0;
  const bytes = new Uint8Array(window.end - window.start + before);
  await file.seek(window.start - before, Deno.SeekMode.Start);
  const read = await readFull(file, bytes);
  if (
    read < bytes.length || bytes[bytes.length - 1] !== NEWLINE || (before && bytes[0] !== NEWLINE)
  ) {
    throw storeCorrupt(
      store,
      `lines ${window.first} to ${
        window.first + window.count - 1
      } are no longer at bytes ${window.start} to ${window.end}`,
    );
  }
  return bytes.subarray(before);
}

async function readFull(file: Deno.FsFile, bytes: Uint8Array): Promise<number> {
  let read = 0;
  while (read < bytes.length) {
    const n = await file.read(bytes.subarray(read));
    if (n === null) break;
    read += n;
  }
  return read;
}
