/**
 * The SQLite store's index of sparse event types: typed reads of those types alone go through it, a store written
 * before it gets it at open, and a store that cannot take it still opens and reads right.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createMemoryLogger } from "@terret/hames";
import { SqliteSessionStore } from "./sqlite_store.ts";
import { SCHEMA, SPARSE_INDEX, SqliteStatements } from "./_sqlite_statements.ts";
import type { SessionEvent } from "./envelope.ts";

const INDEX = "session_events_sparse_v1";

/** A session of `length` events: a user message every tenth, a title at 25, the rest chunks. */
function session(id: string, length: number): SessionEvent[] {
  return Array.from({ length }, (_, i) => ({
    id: `${id}-${i + 1}`,
    session_id: id,
    seq: i + 1,
    at: "2026-12-02T00:00:00.000Z",
    type: i === 0
      ? "session/created"
      : i === 24
      ? "session/titled"
      : i % 10 === 0
      ? "user/message"
      : "assistant/chunk",
    payload: { n: i + 1 },
    parent_id: null,
  }));
}

/** The query plan of a typed read of `types`, as SQLite details it. */
function planOf(db: DatabaseSync, types: readonly string[]): string {
  const { statement, values } = new SqliteStatements(db).typedRange(types);
  return db.prepare(`EXPLAIN QUERY PLAN ${statement.sourceSQL}`).all(
    "s",
    1,
    100,
    ...values,
    10,
  ).map((row) => (row as { detail: string }).detail).join(" | ");
}

function hasIndex(path: string): boolean {
  const db = new DatabaseSync(path);
  try {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(
      INDEX,
    ) !==
      undefined;
  } finally {
    db.close();
  }
}

/** A store file holding `session("s", length)` as written before the index existed (it is dropped). */
async function unindexedStore(path: string, length: number): Promise<void> {
  const first = SqliteSessionStore.open({ path });
  await first.importSession(session("s", length));
  await first.close();
  const raw = new DatabaseSync(path);
  raw.exec(`DROP INDEX ${INDEX}`);
  raw.close();
}

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "terret-sparse-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("sqlite sparse index: a typed read of sparse types alone searches the index; a list with any other type does not", () => {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec(SCHEMA);
    db.exec(SPARSE_INDEX);
    for (
      const types of [["job/started"], ["job/started", "job/ended"], [
        "user/message",
        "context/injected",
      ]]
    ) {
      assert.match(
        planOf(db, types),
        new RegExp(`USING (COVERING )?INDEX ${INDEX} \\(session_id=\\?`),
      );
    }
    for (const types of [["assistant/chunk"], ["user/message", "assistant/chunk"], ["tool/call"]]) {
      assert.doesNotMatch(planOf(db, types), new RegExp(INDEX));
    }
  } finally {
    db.close();
  }
});

Deno.test("sqlite sparse index: a page of the sessions that hold sparse types is a range of the index alone, in id order", () => {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec(SCHEMA);
    db.exec(SPARSE_INDEX);
    const statement = new SqliteStatements(db).listSparse!;
    for (const [after, limit] of [["", -1], ["s5", 100]] as const) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${statement.sourceSQL}`).all(
        JSON.stringify(["approval/requested"]),
        after,
        limit,
      ).map((row) => (row as { detail: string }).detail).join(" | ");
      // Sought from the bound, and in index order: no temporary b-tree to sort or deduplicate, so the scan stops at
      // the limit.
      assert.match(
        plan,
        new RegExp(`SEARCH session_events USING COVERING INDEX ${INDEX} \\(session_id>\\?\\)`),
      );
      assert.doesNotMatch(plan, /TEMP B-TREE/);
    }
  } finally {
    db.close();
  }
});

Deno.test("sqlite sparse index: pages of sparse holders, several entries a session: each holder once, after the bound, at most the limit", async () => {
  const store = SqliteSessionStore.open({ path: ":memory:" });
  try {
    // 40 sessions (s00..s39): a title at seq 25 in the even ones, user messages in all.
    for (let i = 0; i < 40; i++) {
      const id = `s${String(i).padStart(2, "0")}`;
      const events = session(id, 30);
      await store.importSession(
        i % 2 === 0
          ? events
          : events.map((event) =>
            event.type === "session/titled" ? { ...event, type: "assistant/chunk" } : event
          ),
      );
    }
    const titled = ["session/titled"];
    const even = Array.from({ length: 20 }, (_, i) => `s${String(i * 2).padStart(2, "0")}`);
    assert.deepStrictEqual(await store.list({ types: titled }), even);
    assert.deepStrictEqual(await store.list({ types: titled, limit: 3 }), ["s00", "s02", "s04"]);
    assert.deepStrictEqual(await store.list({ types: titled, after: "s04", limit: 2 }), [
      "s06",
      "s08",
    ]);
    assert.deepStrictEqual(await store.list({ types: titled, after: "s05" }), even.slice(3));
    assert.deepStrictEqual(await store.list({ types: titled, after: "s38", limit: 5 }), []);
    assert.deepStrictEqual(await store.list({ types: ["user/message"], after: "s37" }), [
      "s38",
      "s39",
    ]);
  } finally {
    await store.close();
  }
});

Deno.test("sqlite sparse index: a store written before the index gets it at open and reads the same", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/sessions.db`;
    await unindexedStore(path, 120);
    assert.equal(hasIndex(path), false);
    const logger = createMemoryLogger();
    const store = SqliteSessionStore.open({ path, logger });
    try {
      assert.equal(hasIndex(path), true);
      // Said once, at the open that builds it; a new store gets it silently (below).
      assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [[
        "info",
        `Indexed the sparse event types of the SQLite session store "${path}" (once: every stored event was read)`,
      ]]);
      const seqs = async (types: string[]) =>
        (await store.read("s", { types })).map((event) => event.seq);
      assert.deepStrictEqual(await seqs(["session/titled"]), [25]);
      assert.deepStrictEqual(await seqs(["user/message"]), [
        11,
        21,
        31,
        41,
        51,
        61,
        71,
        81,
        91,
        101,
        111,
      ]);
      assert.deepStrictEqual(
        await seqs(["user/message", "session/titled"]).then((s) => s.slice(0, 4)),
        [
          11,
          21,
          25,
          31,
        ],
      );
    } finally {
      await store.close();
    }
    const quiet = createMemoryLogger();
    await SqliteSessionStore.open({ path: `${dir}/new.db`, logger: quiet }).close();
    await SqliteSessionStore.open({ path, logger: quiet }).close();
    assert.equal(hasIndex(`${dir}/new.db`), true);
    assert.deepStrictEqual(quiet.records, []);
  });
});

Deno.test("sqlite sparse index: a store that cannot create it (another writer holds the file) opens, warns once, and reads every type right", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/sessions.db`;
    await unindexedStore(path, 60);
    const writer = new DatabaseSync(path);
    writer.exec("BEGIN IMMEDIATE");
    const logger = createMemoryLogger();
    const store = SqliteSessionStore.open({ path, busyTimeoutMs: 20, logger });
    try {
      assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [[
        "warn",
        `The SQLite session store "${path}" has no index of its sparse event types: typed reads of them scan each session`,
      ]]);
      assert.deepStrictEqual(
        (await store.read("s", { types: ["session/titled"] })).map((e) => e.seq),
        [25],
      );
      assert.deepStrictEqual(
        (await store.read("s", { types: ["user/message"], from_seq: 20, limit: 2 })).map((e) =>
          e.seq
        ),
        [21, 31],
      );
      // Without the index, a list by sparse types names every session (a superset, which the contract allows).
      assert.deepStrictEqual(await store.list({ types: ["job/started"] }), ["s"]);
      assert.deepStrictEqual(await store.list({ types: ["job/started"], limit: 1 }), ["s"]);
      assert.deepStrictEqual(await store.list({ types: ["job/started"], after: "s" }), []);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
      await store.close();
    }
    assert.equal(hasIndex(path), false);
    // The next open, with nobody holding the file, creates it.
    await SqliteSessionStore.open({ path }).close();
    assert.equal(hasIndex(path), true);
  });
});
