import assert from "node:assert/strict";
import { until } from "../../exec/process/_testing.ts";
import {
  MAX_SLICE_BYTES,
  PAGE_BYTES,
  type ReplayJob,
  ReplayScheduler,
  SLICE_BYTES,
  sliceBytes,
  type SliceOutcome,
} from "./_replay_scheduler.ts";

/** A scripted replay: `total` bytes to send, a socket queue that drains only when told, a log of its slices. */
class ScriptedJob implements ReplayJob {
  queue = 0;
  sent = 0;
  /** The bytes each slice was granted. */
  readonly grants: number[] = [];
  constructor(
    readonly name: string,
    readonly total: number,
    readonly window: number,
    readonly log: string[],
  ) {}
  slice(bytes: number): Promise<SliceOutcome> {
    this.log.push(this.name);
    this.grants.push(bytes);
    const chunk = Math.min(bytes, this.total - this.sent);
    this.sent += chunk;
    this.queue += chunk;
    if (this.sent === this.total) return Promise.resolve("done");
    return Promise.resolve(this.queue >= this.window ? "blocked" : "more");
  }
  drained(): boolean {
    return this.queue <= this.window / 2;
  }
  queued(): number {
    return this.queue;
  }
}

Deno.test("ReplayScheduler runs replays round-robin, one slice per turn, at most `concurrency` at once", async () => {
  const log: string[] = [];
  const scheduler = new ReplayScheduler(() => ({ concurrency: 2, budget: 1 << 30 }));
  // Each job takes three slices, whatever their size, and its socket drains at once (a fast reader).
  const jobs = ["a", "b", "c"].map((name) => new ScriptedJob(name, 1 << 30, 1 << 30, log));
  for (const job of jobs) {
    const slice = job.slice.bind(job);
    job.slice = (bytes) =>
      slice(bytes).then((outcome) => job.grants.length === 3 ? "done" : outcome);
    job.queued = () => 0;
  }
  const controller = new AbortController();
  await Promise.all(jobs.map((job) => scheduler.run(job, controller.signal)));
  // a and b take turns; c starts when a finishes.
  assert.deepStrictEqual(log, ["a", "b", "a", "b", "a", "b", "c", "c", "c"]);
  // The slice is shared among the replays competing: three (a, b, and c waiting), then two, then c alone.
  assert.deepStrictEqual(jobs.map((job) => job.grants), [
    [sliceBytes(3), sliceBytes(3), sliceBytes(3)],
    [sliceBytes(3), sliceBytes(3), sliceBytes(2)],
    [MAX_SLICE_BYTES, MAX_SLICE_BYTES, MAX_SLICE_BYTES],
  ]);
  assert.deepStrictEqual(scheduler.stats(), {
    running: 0,
    waiting: 0,
    blocked: 0,
    peak: 2,
    bytes: 0,
    bytes_peak: 2 * PAGE_BYTES,
  });
  scheduler.close();
});

Deno.test("sliceBytes: a replay alone gets the large slice; competitors share it down to the small one", () => {
  assert.equal(sliceBytes(1), MAX_SLICE_BYTES);
  assert.equal(sliceBytes(2), MAX_SLICE_BYTES / 2);
  assert.equal(sliceBytes(3), Math.floor(MAX_SLICE_BYTES / 3));
  assert.equal(sliceBytes(MAX_SLICE_BYTES / SLICE_BYTES), SLICE_BYTES);
  assert.equal(sliceBytes(500), SLICE_BYTES);
  assert.equal(sliceBytes(0), MAX_SLICE_BYTES);
});

Deno.test("ReplayScheduler: a replay alone takes large slices, but never past the byte budget", async () => {
  const log: string[] = [];
  const room = 300 * 1024;
  const budget = PAGE_BYTES + room;
  const scheduler = new ReplayScheduler(() => ({ concurrency: 4, budget }));
  const job = new ScriptedJob("alone", room, 1 << 30, log);
  // A reader that drains at once: the whole budget besides the page is the slice's room, of which a slice takes a
  // third (a job counts UTF-16 code units, up to 3 bytes each in the socket's queue), under the 256 KiB cap.
  job.queued = () => 0;
  await scheduler.run(job, new AbortController().signal);
  assert.deepStrictEqual(job.grants, [room / 3, room / 3, room / 3]);
  assert.ok(
    scheduler.stats().bytes_peak <= budget,
    `held ${scheduler.stats().bytes_peak} of ${budget}`,
  );
  scheduler.close();
});

Deno.test("ReplayScheduler: replays whose sockets never drain take no turn and hold at most the byte budget", async () => {
  const log: string[] = [];
  const budget = 1024 * 1024;
  const scheduler = new ReplayScheduler(() => ({ concurrency: 4, budget }));
  const controller = new AbortController();
  const stuck = Array.from(
    { length: 50 },
    (_, i) => new ScriptedJob(`s${i}`, 8 * budget, SLICE_BYTES, log),
  );
  const runs = stuck.map((job) => scheduler.run(job, controller.signal));
  await until("the budget to fill", () => scheduler.stats().bytes + SLICE_BYTES > budget, 10_000);
  const full = scheduler.stats();
  // The stuck replays are blocked (no turn, no slot) or hold a turn without budget to use it; those not started
  // wait for budget, in arrival order.
  assert.ok(full.running <= 4, `${full.running} running`);
  assert.equal(full.running + full.blocked + full.waiting, 50);
  assert.ok(full.blocked > 4, `only ${full.blocked} blocked`);
  assert.ok(full.bytes_peak <= budget, `held ${full.bytes_peak} of a budget of ${budget}`);
  const started = full.running + full.blocked;
  assert.deepStrictEqual(stuck.slice(started).map((job) => job.sent), Array(full.waiting).fill(0));
  // A fast replay queued now still waits: the budget is spent (a documented limit; stalled readers are swept).
  const fast = new ScriptedJob("fast", SLICE_BYTES, 1 << 30, log);
  let fastDone = false;
  const fastRun = scheduler.run(fast, controller.signal).then(() => fastDone = true);
  // Draining the stuck sockets lets everyone on, the fast one included.
  for (const job of stuck) job.queue = 0;
  const drain = setInterval(() => {
    for (const job of stuck) job.queue = 0;
  }, 1);
  try {
    await Promise.all([...runs, fastRun]);
  } finally {
    clearInterval(drain);
  }
  assert.equal(fastDone, true);
  assert.deepStrictEqual(stuck.map((job) => job.sent), Array(50).fill(8 * budget));
  assert.ok(
    scheduler.stats().bytes_peak <= budget,
    `held ${scheduler.stats().bytes_peak} of ${budget}`,
  );
  scheduler.close();
});

Deno.test("ReplayScheduler drops a replay whose signal aborts, waiting or blocked", async () => {
  const log: string[] = [];
  const scheduler = new ReplayScheduler(() => ({ concurrency: 1, budget: 1 << 30 }));
  const blocked = new ScriptedJob("blocked", 10 * MAX_SLICE_BYTES, SLICE_BYTES, log);
  const waiting = new ScriptedJob("waiting", 10 * MAX_SLICE_BYTES, SLICE_BYTES, log);
  const first = new AbortController();
  const second = new AbortController();
  const runs = [scheduler.run(blocked, first.signal), scheduler.run(waiting, second.signal)];
  await until("the first to block", () => scheduler.stats().blocked >= 1, 10_000);
  first.abort();
  await runs[0];
  await until(
    "the second to block",
    () => scheduler.stats().blocked === 1 && log.includes("waiting"),
    10_000,
  );
  second.abort();
  await runs[1];
  assert.deepStrictEqual(
    scheduler.stats().running + scheduler.stats().waiting + scheduler.stats().blocked,
    0,
  );
  assert.deepStrictEqual(log, ["blocked", "waiting"]);
  // A replay blocked on its reader still competes: each slice was shared between the two.
  assert.deepStrictEqual([blocked.grants, waiting.grants], [[sliceBytes(2)], [sliceBytes(2)]]);
  scheduler.close();
});
