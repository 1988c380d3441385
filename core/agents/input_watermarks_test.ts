/** `InputWatermarks`: where a session's queued input is known claimed, kept as its agent leaves memory. */
import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import { MemorySessionStore } from "../sessions/memory_store.ts";
import { SessionLog } from "../sessions/session_log.ts";
import { InputWatermarks } from "./_input_watermarks.ts";

Deno.test("InputWatermarks answers a watermark only up to the session's head, and forgets the least recently left", () => {
  const marks = new InputWatermarks();
  marks.remember("s", 40);
  assert.equal(marks.get("s", 40), 40);
  assert.equal(marks.get("s", 100), 40);
  // Past the head: not the log it was taken from (a store replaced under the same ids); read from seq 1.
  assert.equal(marks.get("s", 39), 0);
  assert.equal(marks.get("unknown", 10), 0);
  marks.remember("s", 0);
  assert.equal(marks.get("s", 100), 0);
  for (let i = 0; i <= 10_000; i++) marks.remember(`s${i}`, i + 1);
  assert.deepStrictEqual([marks.get("s0", 5), marks.get("s1", 5), marks.get("s10000", 20_000)], [
    0,
    2,
    10_001,
  ]);
});

Deno.test("InputWatermarks.settle moves a watermark to the log's first unclaimed input, and keeps it when the read fails", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s" });
  const queue = (content: string) =>
    log.append("s", { type: "input/queued", payload: { kind: "message", content, wake: true } });
  const one = await queue("one");
  await log.append("s", { type: "user/message", payload: { content: "one", queued_seq: one.seq } });
  const two = await queue("two");
  await queue("three");
  const marks = new InputWatermarks();
  await marks.settle(log, "s", 0, ctx.logger);
  // "one" is claimed, "two" is not: every input at or below the seq before "two" is claimed.
  assert.equal(marks.get("s", 100), two.seq - 1);
  const failing = Object.create(log, {
    read: { value: () => Promise.reject(new Error("disk on fire")) },
  }) as SessionLog;
  await marks.settle(failing, "s", 3, ctx.logger);
  assert.equal(marks.get("s", 100), 3);
});
