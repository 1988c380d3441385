import assert from "node:assert/strict";
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  REAL_TIMING,
} from "./retry.ts";

Deno.test("backoffDelay() doubles from the base, caps at the ceiling, and jitters the upper half", () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 500, maxDelayMs: 3_000 };
  assert.deepStrictEqual(
    [0, 1, 2, 3, 4].map((attempt) => backoffDelay(attempt, policy, () => 0)),
    [250, 500, 1000, 1500, 1500],
  );
  assert.deepStrictEqual(
    [0, 1, 2, 3].map((attempt) => backoffDelay(attempt, policy, () => 0.999999)),
    [500, 1000, 2000, 3000],
  );
  assert.equal(backoffDelay(1, policy, () => 0.5), 750);
  assert.throws(
    () => backoffDelay(-1, policy, () => 0),
    new RangeError("Cannot compute backoff: attempt must be a non-negative integer, got -1"),
  );
});

Deno.test("parseRetryAfter() reads seconds, an HTTP date, retry-after-ms, and ignores garbage", () => {
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  const read = (headers: Record<string, string>): number | undefined =>
    parseRetryAfter(new Headers(headers), now);
  assert.equal(read({ "retry-after": "7" }), 7_000);
  assert.equal(read({ "retry-after": " 1.5 " }), 1_500);
  assert.equal(read({ "retry-after": "Wed, 21 Oct 2015 07:28:09 GMT" }), 9_000);
  assert.equal(read({ "retry-after": "Wed, 21 Oct 2015 07:27:00 GMT" }), 0);
  assert.equal(read({ "retry-after-ms": "250", "retry-after": "7" }), 250);
  assert.equal(read({ "retry-after": "soon" }), undefined);
  assert.equal(read({ "retry-after": "-3" }), undefined);
  assert.equal(read({}), undefined);
});

Deno.test("isRetryableStatus() is true for 408, 429 and 5xx only", () => {
  const statuses = [400, 401, 402, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504, 599];
  assert.deepStrictEqual(statuses.filter(isRetryableStatus), [408, 429, 500, 502, 503, 504, 599]);
});

Deno.test("REAL_TIMING.sleep() ends early when its signal aborts", async () => {
  const controller = new AbortController();
  const slept = REAL_TIMING.sleep(60_000, controller.signal);
  controller.abort();
  await slept;
  await REAL_TIMING.sleep(60_000, AbortSignal.abort());
});
