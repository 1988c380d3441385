/**
 * Replay-then-tail: the one algorithm behind `sessions.stream` and `sessions.streamJson`. Internal.
 *
 * @module
 */
import { setImmediate } from "node:timers";
import { TerretError } from "../errors.ts";
import type { SessionEvent } from "./envelope.ts";
import type { LiveFeed } from "./_live_feed.ts";

/** Where a stream's items come from: pages of the store, and the live commits. */
export interface TailSource<T> {
  /**
   * Reads stored items from `from`, ascending by seq (a page; empty once `from` is past the stored head). The page
   * must start at `from` and be contiguous: a store that finds a seq missing rejects with `StoreCorrupt`.
   */
  page(from: number, signal: AbortSignal | undefined): Promise<readonly T[]>;
  /** The item for one committed event (called at most once per event and stream). */
  item(event: SessionEvent): T;
  /** The item's seq. */
  seq(item: T): number;
}

/**
 * Yields the session's items from `from` with no gap and no duplicate, in batches: each store page as one batch
 * until a page comes back empty, then the live feed (registered by the caller before the first read, so nothing
 * committed meanwhile is missed), everything it holds when pulled as one batch. The policy for falling behind: the
 * feed is bounded; when the consumer pulls too slowly and the feed overflows (or shows a gap), the feed is dropped
 * and the stream catches up from the store again, page by page, so memory stays bounded and nothing is lost. A page
 * that does not start at the next seq is a store fault: the stream throws `StoreCorrupt` naming the session and the
 * seq rather than wait for an event that will never come. The stream ends, without error, when `signal` aborts or
 * the feed closes. Between two store pages the event loop gets a turn, so a consumer that pulls a long replay
 * without doing I/O of its own does not stall every other agent until the replay ends.
 */
export async function* replayThenTail<T>(
  sessionId: string,
  from: number,
  feed: LiveFeed,
  source: TailSource<T>,
  signal: AbortSignal | undefined,
): AsyncGenerator<readonly T[]> {
  let next = from;
  let replay = true;
  let pages = 0;
  while (!aborted(signal) && !feed.closed) {
    if (replay || feed.behind) {
      if (pages++ > 0) {
        await new Promise((resume) => setImmediate(resume));
        if (aborted(signal) || feed.closed) return;
      }
      feed.clear();
      let page: readonly T[];
      try {
        page = await source.page(next, signal);
      } catch (error) {
        if (aborted(signal) || feed.closed) return;
        throw error;
      }
      for (const item of page) {
        const seq = source.seq(item);
        if (seq !== next) throw outOfOrder(sessionId, next, seq);
        next++;
      }
      replay = page.length > 0;
      if (replay) yield page;
      continue;
    }
    const batch: T[] = [];
    for (let event = feed.shift(); event !== undefined; event = feed.shift()) {
      if (event.seq < next) continue;
      if (event.seq > next) {
        feed.behind = true;
        break;
      }
      batch.push(source.item(event));
      next++;
    }
    if (batch.length > 0) yield batch;
    else if (!feed.behind) await feed.wait(signal);
  }
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function outOfOrder(sessionId: string, seq: number, found: number): TerretError {
  return new TerretError(
    "StoreCorrupt",
    `Cannot stream seq ${seq} of session "${sessionId}": the store returned seq ${found} in its place`,
    { details: { session_id: sessionId, seq } },
  );
}
