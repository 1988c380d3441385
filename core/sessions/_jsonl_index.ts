/**
 * A sparse line index of one JSONL session file, so a read starts near its first seq instead of at byte 0. Internal
 * to the JSONL store.
 *
 * @module
 */
import { checkSignal, storeCorrupt } from "./_store_support.ts";

/** The most lines between two marks. */
export const LINES_PER_MARK = 256;
/** A line is marked once this many bytes have gone by since the last mark, however few lines that was. */
export const BYTES_PER_MARK = 256 * 1024;
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
 * The byte offsets of some complete lines of a file (marks), and where its complete lines end. A line is marked when
 * {@linkcode LINES_PER_MARK} lines or {@linkcode BYTES_PER_MARK} bytes have gone by since the last mark (line 1 is
 * always marked), so a window of whole marks stays near its byte bound even when lines are large. Line n holds seq n.
 * It only grows: lines are added as they are found (a catch-up) or written (a commit), and a torn tail (bytes after
 * the last newline) is never indexed, so cutting it leaves the index true.
 */
export class LineIndex {
  /** The marked lines' seqs, ascending. */
  readonly #seqs: number[] = [];
  /** The marked lines' byte offsets (`#offsets[i]` is where line `#seqs[i]` starts). */
  readonly #offsets: number[] = [];
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
    const seqs = this.#seqs;
    const offsets = this.#offsets;
    let at = 0;
    for (let newline = bytes.indexOf(NEWLINE); newline >= 0; newline = bytes.indexOf(NEWLINE, at)) {
      const offset = this.#end + at;
      const last = seqs.length - 1;
      if (
        last < 0 || this.#lines + 1 - seqs[last]! >= LINES_PER_MARK ||
        offset - offsets[last]! >= BYTES_PER_MARK
      ) {
        seqs.push(this.#lines + 1);
        offsets.push(offset);
      }
      this.#lines++;
      at = newline + 1;
    }
    this.#end += at;
    return at;
  }

  /**
   * The window to read for the lines from seq `from`: it starts at the last mark at or before `from` and spans whole
   * marks until it covers `want` lines from `from`, or the next mark starts `maxBytes` or more past its start (so it
   * may run past `maxBytes` by one mark's lines; it always takes one mark's), or it reaches the index's end.
   * `undefined` when `from` is past the last indexed line.
   */
  window(from: number, want: number, maxBytes: number): LineWindow | undefined {
    if (from > this.#lines) return undefined;
    const seqs = this.#seqs;
    const offsets = this.#offsets;
    const mark = lastAtOrBefore(seqs, from);
    const first = seqs[mark]!;
    const start = offsets[mark]!;
    const needed = from - first + want;
    let next = mark + 1;
    while (
      next < seqs.length && seqs[next]! - first < needed && offsets[next]! - start < maxBytes
    ) next++;
    return next < seqs.length
      ? { start, end: offsets[next]!, first, count: seqs[next]! - first }
      : { start, end: this.#end, first, count: this.#lines - first + 1 };
  }
}

/** The index of the last value of ascending `values` at or before `value` (`values[0]` is at most `value`). */
function lastAtOrBefore(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (values[middle]! <= value) low = middle;
    else high = middle - 1;
  }
  return low;
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
