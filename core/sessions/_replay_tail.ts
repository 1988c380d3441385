/**
 * Replay-then-tail: the one algorithm behind `sessions.stream` and `sessions.streamJson`. Internal.
 *
 * @module
 */
import { TerretError } from "@terret/hames";
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
 * Yields the session's items from `from` with no gap and no duplicate: pages of the store until a page comes back
 * empty, then the live feed (registered by the caller before the first read, so nothing committed meanwhile is
 * missed). The policy for falling behind: the feed is bounded; when the consumer pulls too slowly and the feed
 * overflows (or shows a gap), the feed is dropped and the stream catches up from the store again, page by page,
 * so memory stays bounded and nothing is lost. A page that does not start at the next seq is a store fault: the
 * stream throws `StoreCorrupt` naming the session and the seq rather than wait for an event that will never come.
 * The stream ends, without error, when `signal` aborts or the feed closes.
 */
export async function* replayThenTail<T>(
  sessionId: string,
  from: number,
  feed: LiveFeed,
  source: TailSource<T>,
  signal: AbortSignal | undefined,
): AsyncGenerator<T> {
  let next = from;
  let replay = true;
  while (!aborted(signal) && !feed.closed) {
    if (replay || feed.behind) {
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
        yield item;
        next++;
      }
      replay = page.length > 0;
      continue;
    }
    const event = feed.shift();
    if (event === undefined) {
      await feed.wait(signal);
    } else if (event.seq > next) {
      feed.behind = true;
    } else if (event.seq === next) {
      yield source.item(event);
      next++;
    }
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
