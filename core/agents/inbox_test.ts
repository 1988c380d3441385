import assert from "node:assert/strict";
import { Inbox } from "./inbox.ts";

Deno.test("sync drops durable items the log shows claimed, adds unclaimed ones, keeps items without a seq", () => {
  const inbox = new Inbox();
  inbox.push("message", "claimed elsewhere", true, 5);
  inbox.push("steer", "in memory only", false);
  inbox.push("message", "still pending", true, 7);
  inbox.sync([
    { seq: 7, kind: "message", content: "still pending", wake: true },
    { seq: 9, kind: "steer", content: "queued on another node", wake: false },
  ], 9);
  assert.equal(inbox.size, 3);
  assert.deepStrictEqual(inbox.claim(), [
    { kind: "steer", content: "in memory only" },
    { kind: "message", content: "still pending", queued_seq: 7 },
    { kind: "steer", content: "queued on another node", queued_seq: 9 },
  ]);
  assert.equal(inbox.size, 0);
});

Deno.test("sync keeps items queued after its read and never queues again what this inbox handed out", () => {
  const inbox = new Inbox();
  inbox.push("message", "claimed elsewhere", true, 3);
  inbox.push("message", "queued after the read", true, 4);
  inbox.sync([], 3);
  assert.deepStrictEqual(inbox.claim(), [
    { kind: "message", content: "queued after the read", queued_seq: 4 },
  ]);
  // A claim this inbox handed out is not queued again by a read that predates the claim's append.
  inbox.sync([{ seq: 4, kind: "message", content: "queued after the read", wake: true }], 4);
  assert.equal(inbox.size, 0);
});

Deno.test("sync forgets the claims it handed out at or below the settled seq, which no later read names", () => {
  const inbox = new Inbox();
  inbox.push("message", "first", true, 4);
  inbox.push("message", "second", true, 6);
  inbox.claim();
  inbox.claim();
  // Settled through 4: the claim of 4 is forgotten (a read after 4 never names it), the claim of 6 is kept.
  inbox.sync([], 6, 4);
  inbox.sync([
    { seq: 4, kind: "message", content: "first", wake: true },
    { seq: 6, kind: "message", content: "second", wake: true },
  ], 6);
  assert.deepStrictEqual(inbox.claim(), [{ kind: "message", content: "first", queued_seq: 4 }]);
});
