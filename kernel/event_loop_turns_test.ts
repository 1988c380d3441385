import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { EventLoopTurns } from "./event_loop_turns.ts";

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let at = 0;
  return { now: () => at, advance: (ms) => at += ms };
}

Deno.test("EventLoopTurns: a turn lets ready work run first, and waits for a timer at its first turn in each new slice", async () => {
  const clock = manualClock();
  const turns = new EventLoopTurns({ sliceMs: 1, now: clock.now });
  const timeout = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return timeout(...args);
  }) as typeof setTimeout;
  const seen: number[] = [];
  try {
    for (const step of [0.4, 0.4, 0.4, 0.4, 0.4, 1.5, 0.2]) {
      clock.advance(step);
      let ran = false;
      setImmediate(() => ran = true);
      await turns.turn();
      assert.ok(ran, "work that was ready before the turn ran before it ended");
      seen.push(timers);
    }
  } finally {
    globalThis.setTimeout = timeout;
  }
  // At 0.4, 0.8, 1.2, 1.6, 2.0, 3.5 and 3.7 ms: slices 0, 0, 1, 1, 2, 3 and 3 (the first is the construction's).
  assert.deepStrictEqual(seen, [0, 0, 1, 1, 2, 3, 3]);
});

Deno.test("EventLoopTurns: work started at different times waits for its timers in the same slices", async () => {
  const clock = manualClock();
  clock.advance(3.2);
  const early = new EventLoopTurns({ sliceMs: 5, now: clock.now });
  const parked: string[] = [];
  const timeout = globalThis.setTimeout;
  let current = "";
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    parked.push(`${current}@${clock.now()}`);
    return timeout(...args);
  }) as typeof setTimeout;
  try {
    clock.advance(1.5); // 4.7 ms
    const late = new EventLoopTurns({ sliceMs: 5, now: clock.now });
    for (let step = 0; step < 6; step++) {
      clock.advance(1);
      current = "early";
      await early.turn();
      clock.advance(0.5);
      current = "late";
      await late.turn();
    }
  } finally {
    globalThis.setTimeout = timeout;
  }
  // Both cross into the slice of 5-10 ms at their first turn after 5 ms, and into 10-15 ms likewise.
  assert.deepStrictEqual(parked, ["early@5.7", "late@6.2", "early@10.2", "late@10.7"]);
});

Deno.test("EventLoopTurns: a turn in a new slice lets the runtime read a socket that became readable", async () => {
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  using client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  using server = await listener.accept();
  const clock = manualClock();
  const turns = new EventLoopTurns({ sliceMs: 1, now: clock.now });
  let turnsTaken = 0;
  let readAfter: number | undefined;
  const read = server.read(new Uint8Array(1)).then((n) => {
    readAfter = turnsTaken;
    return n;
  });
  await client.write(new Uint8Array([42]));
  // Each step enters a new slice: each turn waits for a timer, and the runtime polls the network meanwhile. Behind
  // turns that only settle at once, the read would wait for the runtime's periodic poll (about 61 turns).
  while (readAfter === undefined && turnsTaken < 100) {
    clock.advance(2);
    await turns.turn();
    turnsTaken++;
  }
  assert.equal(await read, 1);
  assert.ok(
    readAfter !== undefined && readAfter <= 1,
    `the byte was read after ${readAfter} turns`,
  );
});
