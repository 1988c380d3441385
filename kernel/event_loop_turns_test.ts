import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { EventLoopTurns } from "./event_loop_turns.ts";

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let at = 0;
  return { now: () => at, advance: (ms) => at += ms };
}

Deno.test("EventLoopTurns: a turn lets ready work run first, and waits for a timer only once its slice is spent", async () => {
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
  // 1.2 ms (third turn) spends the slice; it restarts there: 0.8 ms by the fifth turn, 2.3 ms by the sixth.
  assert.deepStrictEqual(seen, [0, 0, 1, 1, 1, 2, 2]);
});

Deno.test("EventLoopTurns: once the slice is spent, a turn lets the runtime read a socket that became readable", async () => {
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
  // Each step spends the slice: each turn waits for a timer, and the runtime polls the network meanwhile. Behind
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
