/** `FoldCache`: a long catch-up is folded in slices, with a turn of the event loop between them. */
import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import type { SessionEvent } from "./envelope.ts";
import { FoldCache } from "./_fold_cache.ts";

function event(seq: number): SessionEvent {
  return {
    id: `e${seq}`,
    session_id: "s",
    seq,
    at: "2026-01-01T00:00:00.000Z",
    type: "user/message",
    payload: { content: `m${seq}` },
    parent_id: null,
  };
}

Deno.test("FoldCache folds a long catch-up in slices of 1,000 events, letting queued work run between them", async () => {
  const events = Array.from({ length: 2_500 }, (_, i) => event(i + 1));
  let folded = 0;
  const cache = new FoldCache<{ count: number }>(
    {
      empty: () => ({ count: 0 }),
      fold(state) {
        state.count++;
        folded++;
      },
    },
    {
      // A source that answers at once, as SQLite's synchronous reads do: only the fold's own turns yield.
      head: () => Promise.resolve(events.length),
      read: (_id, from, to) => Promise.resolve(events.slice(from - 1, to)),
    },
    10,
  );
  let foldedWhenATaskRan: number | undefined;
  setImmediate(() => foldedWhenATaskRan = folded);
  assert.equal(await cache.current("s", undefined, (state) => state.count), 2_500);
  // A task queued with the request ran after the first slice, before the second (not after the whole catch-up).
  assert.equal(foldedWhenATaskRan, 1_000);
  // Every event was folded once, and the entry is caught up: a second call folds nothing.
  assert.equal(folded, 2_500);
  assert.equal(await cache.current("s", undefined, (state) => state.count), 2_500);
  assert.equal(folded, 2_500);
});
