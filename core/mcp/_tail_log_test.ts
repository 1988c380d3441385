import assert from "node:assert/strict";
import { TailLog } from "./_tail_log.ts";

Deno.test("TailLog keeps the last characters and counts what it dropped", () => {
  const log = new TailLog(10);
  log.append("0123456789");
  log.append("abc");
  assert.deepStrictEqual([log.text(), log.dropped], ["3456789abc", 3]);
});

Deno.test("TailLog.lastLines() gives the last non-empty lines without colour codes", () => {
  const log = new TailLog(1000);
  log.append("one\n\n  two  \n\x1b[0m\x1b[1m\x1b[31merror\x1b[0m: boom\n");
  assert.equal(log.lastLines(2), "two | error: boom");
  assert.equal(new TailLog(5).lastLines(3), "");
});
