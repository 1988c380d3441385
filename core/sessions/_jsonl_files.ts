/**
 * The JSONL store's file work: whole writes and reads, fsync by path, the torn-tail recovery a session file gets on
 * first touch, and opening a session file to read. Internal to the JSONL store.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { SessionEvent } from "./envelope.ts";
import { storeCorrupt } from "./_store_support.ts";

/** Writes all of `bytes` at the file's position. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}

/** fdatasyncs the file at `path`. */
export function syncPath(path: string): void {
  const file = Deno.openSync(path, { read: true, write: true });
  try {
    file.syncDataSync();
  } finally {
    file.close();
  }
}

/**
 * Finds the last complete line of a session file, cuts any torn bytes after it, and returns its seq (0 for an
 * empty file).
 */
export function recoverTail(file: Deno.FsFile, path: string, logger: Logger | undefined): number {
  const size = file.statSync().size;
  if (size === 0) return 0;
  let window = Math.min(size, 64 * 1024);
  for (;;) {
    const start = size - window;
    const buffer = new Uint8Array(window);
    file.seekSync(start, Deno.SeekMode.Start);
    readAll(file, buffer);
    const end = buffer.lastIndexOf(10);
    const before = end < 0 ? -1 : buffer.lastIndexOf(10, end - 1);
    if ((end < 0 || before < 0) && start > 0) {
      window = Math.min(size, window * 4);
      continue;
    }
    const keep = end < 0 ? 0 : start + end + 1;
    if (keep < size) {
      logger?.log("warn", `Cut a torn last line from "${path}"`, { path, bytes: size - keep });
      file.truncateSync(keep);
    }
    if (end < 0) return 0;
    const line = new TextDecoder().decode(buffer.subarray(before + 1, end));
    return (parseLine(line, path, -1) as { seq: number }).seq;
  }
}

function readAll(file: Deno.FsFile, buffer: Uint8Array): void {
  let offset = 0;
  while (offset < buffer.length) {
    const n = file.readSync(buffer.subarray(offset));
    if (n === null) throw new Error("Unexpected end of file");
    offset += n;
  }
}

function parseLine(line: string, path: string, lineNumber: number): SessionEvent {
  try {
    return JSON.parse(line) as SessionEvent;
  } catch (error) {
    const where = lineNumber < 0 ? "its last line" : `line ${lineNumber}`;
    throw storeCorrupt(`"${path}"`, `${where} is not JSON (${(error as Error).message})`);
  }
}

/** The session file opened for reading, or `undefined` when it does not exist (the session has no events). */
export function openForRead(path: string): Deno.FsFile | undefined {
  try {
    return Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
