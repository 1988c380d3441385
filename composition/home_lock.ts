/**
 * The Terret home's serve lock: one `trt serve` per home. An OS file lock (`flock`) on `<home>/serve.lock`, held for
 * the life of the serving process and released by the kernel when the process dies (kill -9 included), so a stale
 * file never blocks a restart. Read-only verbs (`dump-config`, `doctor`, `permissions`) never take it.
 *
 * @module
 */
import { join } from "node:path";
import { TerretError } from "@terret/hames";

/** The lock file's name under the Terret home. */
export const HOME_LOCK_FILE = "serve.lock";

/** The lock file of a Terret home. */
export function homeLockPath(home: string): string {
  return join(home, HOME_LOCK_FILE);
}

/** A held home lock; disposing it releases the lock (the process ending does too). */
export interface HomeLock extends AsyncDisposable {
  /** The lock file. */
  readonly path: string;
  /** Releases the lock. */
  release(): Promise<void>;
}

/**
 * Creates the Terret home when missing, with mode 0700 (its parents too). An existing home keeps its mode
 * (`trt doctor` warns when it is readable by others).
 */
export async function ensureHome(home: string): Promise<void> {
  try {
    await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A process re-run under scoped permissions (`serve --scoped`) has no write grant on the home itself: the
    // process that re-ran it created the home already.
    if (!(error instanceof Deno.errors.NotCapable)) throw error;
  }
}

/**
 * Takes the home's serve lock without waiting and writes this process's id into the file.
 *
 * Contract: exactly one process holds the lock of a home at a time; the lock is the kernel's, so it is released when
 * the holder exits however it exits. A second caller is refused at once, never queued.
 *
 * @throws {TerretError} `HomeLocked` naming the home and the process id the holder wrote
 */
export async function acquireHomeLock(home: string): Promise<HomeLock> {
  const path = homeLockPath(home);
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } catch (error) {
    file.close();
    throw error;
  }
  if (!locked) {
    file.close();
    const holder = (await Deno.readTextFile(path).catch(() => "")).trim();
    throw new TerretError(
      "HomeLocked",
      `Cannot serve the Terret home "${home}": another trt serve${
        /^\d+$/.test(holder) ? ` (process ${holder})` : ""
      } is serving it and holds its lock "${path}"; stop it first, or give this one another --home`,
      { details: { home, path, pid: /^\d+$/.test(holder) ? Number(holder) : undefined } },
    );
  }
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    try {
      await file.unlock();
    } finally {
      file.close();
    }
  };
  return { path, release, [Symbol.asyncDispose]: release };
}
