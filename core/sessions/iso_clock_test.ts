import assert from "node:assert/strict";
import { IsoClock } from "./_iso_clock.ts";

Deno.test("IsoClock spells every millisecond of a second as toISOString does, across second boundaries", () => {
  const clock = new IsoClock();
  const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
  for (let ms = start; ms < start + 2_100; ms++) {
    assert.equal(clock.format(ms), new Date(ms).toISOString(), `at ${ms}`);
  }
});

Deno.test("IsoClock spells times out of order, before 1970 and in six-digit years as toISOString does", () => {
  const clock = new IsoClock();
  const samples = [
    0,
    5,
    -1,
    -999,
    -1_000,
    -1_001,
    Date.UTC(1969, 0, 1, 0, 0, 0, 7),
    Date.UTC(2026, 5, 1, 12, 0, 0, 42),
    Date.UTC(2026, 5, 1, 12, 0, 0, 41),
    8.64e15,
    -8.64e15,
    253402300800000, // 10000-01-01T00:00:00.000Z: +010000
  ];
  for (const ms of samples) assert.equal(clock.format(ms), new Date(ms).toISOString(), `at ${ms}`);
});
