import assert from "node:assert/strict";
import { DataVersionPoll } from "./_data_version_poll.ts";

Deno.test("DataVersionPoll reads the version when its first listener comes, and never again once stopped", () => {
  let reads = 0;
  const poll = new DataVersionPoll(() => ++reads, 60_000, undefined);
  const off = poll.add(() => {});
  assert.equal(reads, 1); // the baseline the ticks compare with
  off(); // the last listener gone: the interval is cleared
  poll.stop();
  const late = poll.add(() => {});
  late();
  // A listener added after the stop (the store is closed) starts nothing: no read, no interval left running.
  assert.equal(reads, 1);
});
