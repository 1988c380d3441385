/**
 * The kernel's logging seam.
 *
 * The kernel never writes to a console directly: it reports through the {@linkcode Logger} given to
 * {@linkcode createContext}. The default writes one JSON line per record to standard error.
 *
 * @module
 */

/** Severity of a log record. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * Where the kernel and plugins report what happened.
 *
 * Contract: a logger must not throw and must not block; it receives structured fields, never secrets it did not
 * get from the caller.
 */
export interface Logger {
  /** Records a message with structured fields at the given level. */
  log(level: LogLevel, message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/**
 * Creates a logger writing one JSON object per line to standard error, dropping records below `level`.
 *
 * @param level the lowest level written (default `"info"`)
 * @returns a {@linkcode Logger}
 */
export function createStderrLogger(level: LogLevel = "info"): Logger {
  const floor = LEVELS.indexOf(level);
  const encoder = new TextEncoder();
  return {
    log(at, message, fields) {
      if (LEVELS.indexOf(at) < floor) return;
      const line = JSON.stringify({
        at: new Date().toISOString(),
        level: at,
        message,
        ...serialise(fields),
      });
      try {
        writeStderr(encoder.encode(line + "\n"));
      } catch {
        // A logger must never throw into its caller.
      }
    },
  };
}

/** A logger that keeps records in memory; for tests that assert what was reported. */
export interface MemoryLogger extends Logger {
  /** Every record logged so far, oldest first. */
  readonly records: {
    level: LogLevel;
    message: string;
    fields: Readonly<Record<string, unknown>>;
  }[];
}

/** Creates a {@linkcode MemoryLogger}. */
export function createMemoryLogger(): MemoryLogger {
  const records: MemoryLogger["records"] = [];
  return {
    records,
    log(level, message, fields = {}) {
      records.push({ level, message, fields });
    },
  };
}

const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

function serialise(fields: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  if (fields === undefined) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { name: value.name, message: value.message } : value;
  }
  return out;
}

function writeStderr(bytes: Uint8Array): void {
  const deno = (globalThis as { Deno?: { stderr?: { writeSync(b: Uint8Array): number } } }).Deno;
  if (deno?.stderr) {
    let offset = 0;
    while (offset < bytes.length) offset += deno.stderr.writeSync(bytes.subarray(offset));
  }
}
