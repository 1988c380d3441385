/** `readChildEnd`: how a child's last turn ended, read back from its head, as `childEnd` reads the whole log. */
import assert from "node:assert/strict";
import { type RecordedRead, recordReads, seededRandom } from "../testing.ts";
import { createContext } from "@terret/hames";
import { SessionLog } from "../sessions/session_log.ts";
import { MemorySessionStore } from "../sessions/memory_store.ts";
import { SqliteSessionStore } from "../sessions/sqlite_store.ts";
import { childEnd, readChildEnd, TaskCalls } from "./lineage.ts";

type Draft = { type: string; payload: unknown };

/**
 * A child's log after `session/created`: about `size` events in turns of messages and tool calls, each turn closed
 * by a `turn/end` of any status, the last one left open about a third of the time.
 */
function childLog(next: () => number, size: number): Draft[] {
  const drafts: Draft[] = [];
  let open = false;
  let n = 0;
  const end = (): void => {
    const status = ["completed", "failed", "cancelled", "rejected"][Math.floor(next() * 4)]!;
    drafts.push({
      type: "turn/end",
      payload: status === "failed"
        ? { status, error: { code: "ModelError", message: `broke ${n}` } }
        : { status },
    });
    open = false;
  };
  while (drafts.length < size) {
    const roll = next();
    if (!open) {
      drafts.push({ type: "turn/start", payload: {} });
      open = true;
    } else if (roll < 0.3) {
      const parts = next() < 0.2
        ? [{ type: "tool_call", id: `c${n}`, name: "Read", args: {} }]
        : [{ type: "thinking", text: "hm" }, { type: "text", text: `answer ${n++}` }];
      drafts.push({ type: "assistant/message", payload: { parts } });
    } else if (roll < 0.33) {
      end();
    } else {
      drafts.push({
        type: "tool/call",
        payload: { id: `t${drafts.length}`, name: "Read", args: {} },
      });
    }
  }
  if (open && next() < 0.7) end();
  return drafts;
}

async function sessionOf(drafts: readonly Draft[]): Promise<SessionLog> {
  const log = new SessionLog(createContext({ mode: "test" }), new MemorySessionStore());
  await log.create({ session_id: "child" });
  for (const draft of drafts) await log.append("child", draft);
  return log;
}

/** The seq ranges of the recorded reads (`to` is Infinity for a read up to the head). */
const ranges = (reads: readonly RecordedRead[]): number[][] =>
  reads.map((read) => [read.from, read.to]);

Deno.test("readChildEnd() equals childEnd() of the whole log, over logs of open and closed turns across windows", async () => {
  const next = seededRandom(7);
  const statuses = new Set<string | undefined>();
  for (let round = 0; round < 40; round++) {
    const size = round < 4 ? round : 1 + Math.floor(next() * 1_300);
    const log = await sessionOf(childLog(next, size));
    const want = childEnd(await log.read("child"));
    assert.deepStrictEqual(
      await readChildEnd(log, "child"),
      want,
      `round ${round} (${size} events)`,
    );
    statuses.add(want.status);
  }
  // Every outcome was met: each status and a turn still open.
  assert.deepStrictEqual(
    statuses,
    new Set([undefined, "completed", "failed", "cancelled", "rejected"]),
  );
  assert.deepStrictEqual(await readChildEnd(await sessionOf([]), "child"), {
    status: undefined,
    text: "",
  });
});

Deno.test("readChildEnd() of a child whose one turn holds 5,000 events reads one window from the head", async () => {
  const drafts: Draft[] = [{ type: "turn/start", payload: {} }];
  for (let i = 0; i < 5_000; i++) {
    drafts.push({ type: "tool/call", payload: { id: `t${i}`, name: "Read", args: {} } });
  }
  drafts.push(
    { type: "assistant/message", payload: { parts: [{ type: "text", text: "done" }] } },
    { type: "turn/end", payload: { status: "completed" } },
  );
  const { sessions, reads } = recordReads(await sessionOf(drafts));
  assert.deepStrictEqual(await readChildEnd(sessions, "child"), {
    status: "completed",
    text: "done",
  });
  // session/created, turn/start, 5,000 calls, the message and turn/end: the head is 5,004.
  assert.deepStrictEqual(ranges(reads), [[5_004 - 511, 5_004]]);
});

/** A parent whose log holds `calls`: `Task` ones and others, a Task id sometimes repeated (one call, not two). */
async function appendCalls(log: SessionLog, calls: readonly [string, string][]): Promise<void> {
  for (const [id, name] of calls) {
    await log.append("parent", { type: "tool/call", payload: { id, name, args: {} } });
  }
}

/** The reference: the call's place among the distinct Task calls of the whole log, counted plainly. */
async function placeByReading(log: SessionLog, callId: string): Promise<number> {
  const seen: string[] = [];
  for (const event of await log.read("parent", { types: ["tool/call"] })) {
    const { id, name } = event.payload as { id: string; name: string };
    if (name === "Task" && !seen.includes(id)) seen.push(id);
  }
  const at = seen.indexOf(callId);
  return at < 0 ? seen.length + 1 : at + 1;
}

Deno.test("TaskCalls numbers a parent's Task calls as a read of its whole log does, reading only what is new", async () => {
  const next = seededRandom(11);
  const log = new SessionLog(createContext({ mode: "test" }), new MemorySessionStore());
  await log.create({ session_id: "parent" });
  const { sessions, reads } = recordReads(log);
  const kept = new TaskCalls(sessions);
  const ids: string[] = [];
  let previous = 0;
  for (let round = 0; round < 30; round++) {
    const batch: [string, string][] = [];
    for (let i = Math.floor(next() * 40); i >= 0; i--) {
      const again = ids.length > 0 && next() < 0.1;
      const id = again ? ids[Math.floor(next() * ids.length)]! : `call-${round}-${i}`;
      const name = again || next() < 0.2 ? "Task" : "Bash";
      if (name === "Task" && !again) ids.push(id);
      batch.push([id, name]);
    }
    await appendCalls(log, batch);
    const head = await log.head("parent");
    reads.length = 0;
    for (const id of [ids.at(-1) ?? "none", ids[0] ?? "none", "not-in-the-log"]) {
      const whole = await placeByReading(log, id);
      assert.equal(await kept.place("parent", id), whole, `round ${round}, call ${id}`);
    }
    // One catch-up read, of the events since the previous round's head.
    assert.deepStrictEqual(ranges(reads), [[previous + 1, head]], `round ${round}`);
    previous = head;
  }
  assert.equal(await kept.place("parent", ids[0]!), 1);
  assert.equal(await kept.place("parent", "not-in-the-log"), ids.length + 1);
});

Deno.test("TaskCalls over a shared SQLite file counts the other process's calls; eviction and concurrent calls stay exact", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/shared.db`;
    const stores = [SqliteSessionStore.open({ path }), SqliteSessionStore.open({ path })];
    const [mine, theirs] = stores.map((store) =>
      new SessionLog(createContext({ mode: "test" }), store)
    ) as [SessionLog, SessionLog];
    for (const id of ["parent", "other", "third"]) await mine.create({ session_id: id });
    const calls = new TaskCalls(mine, 2);
    await appendCalls(mine, [["a", "Task"], ["b", "Bash"]]);
    assert.equal(await calls.place("parent", "a"), 1);
    await appendCalls(theirs, [["c", "Task"], ["d", "Task"]]);
    assert.equal(await calls.place("parent", "d"), 3);
    // Two more parents push "parent" out (the cap is 2); it is read again, exactly.
    for (const id of ["other", "third"]) {
      await mine.append(id, { type: "tool/call", payload: { id: "x", name: "Task", args: {} } });
      assert.equal(await calls.place(id, "x"), 1);
    }
    await appendCalls(theirs, [["e", "Task"]]);
    const [e, d, next] = await Promise.all([
      calls.place("parent", "e"),
      calls.place("parent", "d"),
      calls.place("parent", "later"),
    ]);
    assert.deepStrictEqual([e, d, next], [4, 3, 5]);
    for (const store of stores) await store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
