/**
 * Pipe helpers for captured children: a cancellable drain into a capture, a stdin feeder, a bounded wait.
 *
 * @module
 */
import type { HeadTailCapture } from "./_capture.ts";

/** A capture loop over one pipe. */
export interface Drain {
  /** Settles at EOF, on a failure, or once cancelled. */
  readonly done: Promise<void>;
  /** Cancels the read (when still reading) and waits for the loop to end. */
  cancel(): Promise<void>;
}

/** Reads `stream` into `capture` until EOF, a failure or `cancel()`. */
export function drain(stream: ReadableStream<Uint8Array>, capture: HeadTailCapture): Drain {
  const reader = stream.getReader();
  let finished = false;
  const done = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        capture.push(value);
      }
    } catch {
      // A cancelled or failed pipe ends the capture; what was read is kept.
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

/** Writes `bytes` to `stdin` and closes it; a child that stops reading early is not an error. */
export async function feed(stdin: WritableStream<Uint8Array>, bytes: Uint8Array): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(bytes);
    await writer.close();
  } catch {
    // The child exited (or closed stdin) before reading everything; that is its choice.
  } finally {
    writer.releaseLock();
  }
}

/** Waits for `promise` for at most `ms` milliseconds (never rejects). */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise((resolve) => timer = setTimeout(resolve, ms))]).catch(
    () => {},
  );
  clearTimeout(timer);
}
