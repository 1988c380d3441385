import assert from "node:assert/strict";
import postgres from "postgres";
import { TerretError } from "../errors.ts";
import { PostgresSessionStore } from "./postgres_store.ts";
import {
  listQuery,
  listTypedQuery,
  MIGRATIONS,
  quoted,
  rangeQuery,
  SCHEMA_VERSION,
} from "./_schema.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";
import { postgresLane } from "../../tests/postgres/cluster.ts";
import { stablePort } from "../../tests/ports.ts";

const lane = await postgresLane();
const url = lane.cluster === undefined ? "" : await lane.cluster.createDatabase("store_test");
let schemas = 0;

/** A fresh schema per test in the file's database. */
function harness(schema = `conformance_${++schemas}`) {
  return Promise.resolve({
    open: () => PostgresSessionStore.open({ url, schema }),
    cleanup: async () => {
      const sql = postgres(url, { onnotice: () => {} });
      await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await sql.end();
    },
  });
}

if (lane.skip === undefined) {
  runSessionStoreConformance("postgres", () => harness(), { persistent: true, typedList: "exact" });
}

const test = (name: string, fn: () => Promise<void>): void =>
  Deno.test({ name: `postgres store: ${name}`, ignore: lane.skip !== undefined, fn });

test("a schema newer than the code is refused with StoreSchemaNewer", async () => {
  const store = await PostgresSessionStore.open({ url, schema: "newer" });
  await store.close();
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await sql.unsafe(`UPDATE newer.terret_schema SET version = ${SCHEMA_VERSION + 1}`);
    await assert.rejects(PostgresSessionStore.open({ url, schema: "newer" }), (error: unknown) => {
      assert.ok(error instanceof TerretError);
      assert.deepStrictEqual([error.code, error.message], [
        "StoreSchemaNewer",
        `Cannot open the PostgreSQL session store "postgres://terret@127.0.0.1:${
          lane.cluster!.port
        }/store_test": schema "newer" is version ${SCHEMA_VERSION + 1}, newer than this Terret's ` +
        `${SCHEMA_VERSION} (upgrade Terret; never downgrade the schema)`,
      ]);
      return true;
    });
    assert.deepStrictEqual(
      [...await sql.unsafe("SELECT version FROM newer.terret_schema").values()],
      [[SCHEMA_VERSION + 1]],
    );
  } finally {
    await sql.unsafe("DROP SCHEMA newer CASCADE");
    await sql.end();
  }
});

test("three nodes opening a new schema at once create it once, at the current version", async () => {
  const sql = postgres(url, { onnotice: () => {} });
  try {
    const stores = await Promise.all(
      [1, 2, 3].map(() => PostgresSessionStore.open({ url, schema: "migrated" })),
    );
    await Promise.all(stores.map((store) => store.close()));
    assert.deepStrictEqual(
      [...await sql.unsafe("SELECT version FROM migrated.terret_schema").values()],
      [[SCHEMA_VERSION]],
    );
  } finally {
    await sql.unsafe("DROP SCHEMA migrated CASCADE");
    await sql.end();
  }
});

test("the sparse types' index: created at open (an existing schema included, its version unchanged) and what a typed read or a list of sparse types alone is planned through", async () => {
  const sql = postgres(url, { onnotice: () => {} });
  const indexed = async () =>
    (await sql.unsafe(
      "SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = 'sparse' AND indexname = 'session_events_sparse_v1'",
    ))[0]!.n;
  try {
    await (await PostgresSessionStore.open({ url, schema: "sparse" })).close();
    assert.equal(await indexed(), 1);
    await sql.unsafe("DROP INDEX sparse.session_events_sparse_v1");
    const store = await PostgresSessionStore.open({ url, schema: "sparse" });
    assert.equal(await indexed(), 1);
    assert.deepStrictEqual(
      [...await sql.unsafe("SELECT version FROM sparse.terret_schema").values()],
      [[SCHEMA_VERSION]],
    );
    await store.close();
    // The store's own query text, planned as a prepared statement (the store's way) in its generic plan (what a
    // statement executed often settles on: the types unknown when planned), with sequential scans off so the
    // planner's choice between indexes shows on a small table.
    const plan = async (types: string[]): Promise<string> =>
      await sql.begin(async (tx) => {
        await tx.unsafe("SET LOCAL enable_seqscan = off");
        await tx.unsafe("SET LOCAL plan_cache_mode = force_generic_plan");
        await tx.unsafe(
          `PREPARE typed (text, bigint, bigint, bigint, text[]) AS ${
            rangeQuery(quoted("sparse"), types)
          }`,
        );
        const list = types.map((type) => `'${type}'`).join(", ");
        const rows = await tx.unsafe(`EXPLAIN EXECUTE typed('s', 1, 100, 10, ARRAY[${list}])`);
        await tx.unsafe("DEALLOCATE typed");
        return rows.map((row) => row["QUERY PLAN"] as string).join("\n");
      });
    assert.match(await plan(["job/started", "job/ended"]), /session_events_sparse_v1/);
    assert.match(await plan(["user/message"]), /session_events_sparse_v1/);
    assert.doesNotMatch(
      await plan(["user/message", "assistant/chunk"]),
      /session_events_sparse_v1/,
    );
    // The lists, in their generic plans too, on a table of some size (2,000 sessions of 10 events, a title in every
    // other one, analyzed), where a plan's cost shows: a page of the sessions holding sparse types is a range scan of
    // their index alone from the bound, in id order under the limit (no sort: it stops at the limit); a page of every
    // session, the same of the heads' key.
    await sql.unsafe(`
      INSERT INTO sparse.session_heads (session_id, head) SELECT 's' || i, 10 FROM generate_series(1, 2000) i;
      INSERT INTO sparse.session_events (session_id, seq, id, at, type, payload)
        SELECT 's' || i, k, i || '-' || k, '2026-01-01T00:00:00.000Z',
          CASE WHEN k = 1 THEN 'session/created' WHEN k = 3 THEN 'user/message'
            WHEN k = 5 AND i % 2 = 0 THEN 'session/titled' ELSE 'assistant/chunk' END, '{}'
        FROM generate_series(1, 2000) i, generate_series(1, 10) k;
      ANALYZE sparse.session_heads;
      ANALYZE sparse.session_events;`);
    const listPlan = async (types: string, params: string, args: string): Promise<string> =>
      await sql.begin(async (tx) => {
        await tx.unsafe("SET LOCAL plan_cache_mode = force_generic_plan");
        await tx.unsafe(
          `PREPARE listed (${params}) AS ${
            types === "" ? listQuery(quoted("sparse")) : listTypedQuery(quoted("sparse"))
          }`,
        );
        const rows = await tx.unsafe(`EXPLAIN EXECUTE listed(${types}${args})`);
        await tx.unsafe("DEALLOCATE listed");
        return rows.map((row) => row["QUERY PLAN"] as string).join("\n");
      });
    for (const args of [", 's1000', 100", ", '', NULL"]) {
      const listed = await listPlan("ARRAY['session/titled']", "text[], text, bigint", args);
      assert.match(listed, /^Limit/);
      assert.match(listed, /Index Only Scan using session_events_sparse_v1/);
      assert.match(listed, /Index Cond: \(session_id > \$2\)/);
      assert.doesNotMatch(listed, /Sort|Hash/);
      const heads = await listPlan("", "text, bigint", args.slice(2));
      assert.match(heads, /^Limit/);
      assert.match(heads, /Index Scan using session_heads_pkey/);
      assert.match(heads, /Index Cond: \(session_id > \$1\)/);
      assert.doesNotMatch(heads, /Sort|Hash/);
    }
  } finally {
    await sql.unsafe("DROP SCHEMA IF EXISTS sparse CASCADE");
    await sql.end();
  }
});

test("a database that is down is named without its password", async () => {
  // Nothing listens there, and no parallel test's listener is handed it meanwhile.
  const port = stablePort();
  await assert.rejects(
    PostgresSessionStore.open({ url: `postgres://terret:hunter2@127.0.0.1:${port}/fleet` }),
    (error: unknown) => {
      assert.ok(error instanceof TerretError);
      assert.equal(error.code, "StoreFailed");
      assert.match(
        error.message,
        new RegExp(
          `^Cannot open the PostgreSQL session store "postgres://terret@127\\.0\\.0\\.1:${port}/fleet": .*ECONNREFUSED`,
        ),
      );
      assert.ok(!error.message.includes("hunter2"), error.message);
      return true;
    },
  );
});

test("a bad schema name is refused before connecting", async () => {
  await assert.rejects(
    PostgresSessionStore.open({ url: "postgres://terret:pw@127.0.0.1:1/x", schema: "Bad-Name" }),
    {
      code: "StoreFailed",
      message:
        'Cannot open the PostgreSQL session store "postgres://terret@127.0.0.1:1/x": schema "Bad-Name" must match /^[a-z_][a-z0-9_]{0,62}$/',
    },
  );
});

function draft(sessionId: string, text: string, expect: "new" | "existing" = "existing") {
  const payload = { kind: "text", text };
  return {
    id: crypto.randomUUID(),
    session_id: sessionId,
    at: new Date(0).toISOString(),
    type: expect === "new" ? "session/created" : "assistant/chunk",
    payload: expect === "new" ? {} : payload,
    parent_id: null,
    payload_json: expect === "new" ? "{}" : JSON.stringify(payload),
    expect,
  };
}

test("an agent's lease goes to one node at a time, and each new holder gets the next fencing token", async () => {
  const store = await PostgresSessionStore.open({ url, schema: "leases", listen: false });
  try {
    const first = await store.leases.acquire("op", "node-a", 60_000);
    assert.deepStrictEqual([first?.owner, first?.token], ["node-a", 1]);
    assert.equal(await store.leases.acquire("op", "node-b", 60_000), undefined);
    // The holder acquiring again renews under the same token.
    const again = await store.leases.acquire("op", "node-a", 60_000);
    assert.deepStrictEqual([again?.owner, again?.token], ["node-a", 1]);
    assert.equal(await store.leases.release(first!), true);
    assert.equal(await store.leases.release(first!), false);
    // A released lease is not orphaned; one that expired unreleased (its holder died) is.
    assert.deepStrictEqual(await store.leases.orphaned(10), []);
    await store.leases.acquire("dead", "node-c", 0);
    assert.deepStrictEqual(await store.leases.orphaned(10), ["dead"]);
    const second = await store.leases.acquire("op", "node-b", 60_000);
    assert.deepStrictEqual([second?.owner, second?.token], ["node-b", 2]);
    assert.equal(await store.leases.renew(first!, 60_000), undefined);
    assert.deepStrictEqual((await store.leases.renew(second!, 60_000))?.token, 2);
  } finally {
    await store.close();
    await (await harness("leases")).cleanup();
  }
});

test("split brain: a paused holder whose lease was taken over has its next append refused by the fencing token", async () => {
  const a = await PostgresSessionStore.open({ url, schema: "fencing", listen: false });
  const b = await PostgresSessionStore.open({ url, schema: "fencing", listen: false });
  try {
    await a.append(draft("op", "", "new"));
    // Node A's lease with a ttl of 0 is what a holder paused past its ttl has: expired, not yet taken.
    const old = (await a.leases.acquire("op", "node-a", 0))!;
    assert.equal((await a.appendFenced(draft("op", "a1"), old)).seq, 2);
    const taken = (await b.leases.acquire("op", "node-b", 60_000))!;
    assert.deepStrictEqual([taken.owner, taken.token], ["node-b", old.token + 1]);
    assert.equal((await b.appendFenced(draft("op", "b1"), taken)).seq, 3);
    // A resumes and appends under its old token: refused, nothing appended.
    await assert.rejects(a.appendFenced(draft("op", "a2"), old), {
      code: "StaleFencingToken",
      message:
        `Cannot append to session "op" under fencing token ${old.token}: the agent's lease is at token ` +
        `${taken.token} (another node holds the agent)`,
    });
    assert.equal(await a.leases.renew(old, 60_000), undefined);
    assert.equal((await b.appendFenced(draft("op", "b2"), taken)).seq, 4);
    assert.deepStrictEqual(
      (await a.read("op")).map((e) => [e.seq, (e.payload as { text?: string }).text]),
      [[1, undefined], [2, "a1"], [3, "b1"], [4, "b2"]],
    );
    await assert.rejects(a.appendFenced(draft("nobody", "x"), old), {
      code: "StaleFencingToken",
      message:
        `Cannot append to session "nobody" under fencing token ${old.token}: no lease was ever granted ` +
        "(another node holds the agent)",
    });
  } finally {
    await b.close();
    await a.close();
    await (await harness("fencing")).cleanup();
  }
});

test("a schema at an older version is upgraded in place, keeping its events", async () => {
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await sql.unsafe("CREATE SCHEMA older");
    await sql.unsafe(
      "CREATE TABLE older.terret_schema (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)",
    );
    await sql.unsafe(MIGRATIONS[0]!.replaceAll("{s}", '"older"'));
    await sql.unsafe("INSERT INTO older.terret_schema (version) VALUES (1)");
    await sql.unsafe(
      "INSERT INTO older.session_heads VALUES ('s', 1); INSERT INTO older.session_events VALUES " +
        `('s', 1, 'e1', '1970-01-01T00:00:00.000Z', 'session/created', NULL, '{}')`,
    );
    const store = await PostgresSessionStore.open({ url, schema: "older", listen: false });
    try {
      assert.deepStrictEqual(
        [...await sql.unsafe("SELECT version FROM older.terret_schema").values()],
        [[SCHEMA_VERSION]],
      );
      assert.deepStrictEqual((await store.read("s")).map((e) => [e.seq, e.id]), [[1, "e1"]]);
      assert.equal((await store.leases.acquire("s", "node-a", 1000))?.token, 1);
    } finally {
      await store.close();
    }
  } finally {
    await sql.unsafe("DROP SCHEMA older CASCADE");
    await sql.end();
  }
});

/** The outcomes of appends submitted together (one group), as seqs or error codes, in submission order. */
async function outcomes(appended: Promise<{ seq: number }>[]): Promise<(number | string)[]> {
  const settled = await Promise.allSettled(appended);
  return settled.map((s) =>
    s.status === "fulfilled" ? s.value.seq : String((s.reason as TerretError).code)
  );
}

test("one group mixing creates, appends, refusals and fences gives each draft its own outcome", async () => {
  const store = await PostgresSessionStore.open({ url, schema: "mixed", listen: false });
  try {
    await store.append(draft("t", "", "new"));
    const lease = (await store.leases.acquire("t", "node-a", 60_000))!;
    const before = store.stats().groups;
    const results = await outcomes([
      store.append(draft("u", "u1")), // no session yet: refused
      store.append(draft("s", "", "new")),
      store.append(draft("s", "s1")),
      store.append(draft("s", "", "new")), // created above in this group: refused
      store.append(draft("s", "s2")),
      store.appendFenced(draft("t", "t1"), lease),
      store.appendFenced(draft("t", "t2"), { token: lease.token + 1 }), // not the current token
      store.append(draft("t", "", "new")), // exists: refused
      store.append(draft("t", "t3")),
    ]);
    assert.equal(store.stats().groups - before, 1);
    assert.deepStrictEqual(results, [
      "SessionNotFound",
      1,
      2,
      "SessionExists",
      3,
      2,
      "StaleFencingToken",
      "SessionExists",
      3,
    ]);
    const texts = async (id: string) =>
      (await store.read(id)).map((e) => [e.seq, (e.payload as { text?: string }).text ?? ""]);
    assert.deepStrictEqual(await texts("s"), [[1, ""], [2, "s1"], [3, "s2"]]);
    assert.deepStrictEqual(await texts("t"), [[1, ""], [2, "t1"], [3, "t3"]]);
    assert.deepStrictEqual(await store.list(), ["s", "t"]);
    assert.deepStrictEqual([await store.head("s"), await store.head("t"), await store.head("u")], [
      3,
      3,
      0,
    ]);
  } finally {
    await store.close();
    await (await harness("mixed")).cleanup();
  }
});

test("one group of appends to existing sessions refuses a missing session and a stale token, and writes the rest", async () => {
  const store = await PostgresSessionStore.open({ url, schema: "lean", listen: false });
  try {
    await Promise.all([store.append(draft("a", "", "new")), store.append(draft("b", "", "new"))]);
    const lease = (await store.leases.acquire("b", "node-a", 60_000))!;
    const before = store.stats().groups;
    const results = await outcomes([
      store.append(draft("a", "a1")),
      store.appendFenced(draft("b", "b1"), { token: lease.token + 1 }),
      store.append(draft("gone", "g1")),
      store.append(draft("a", "a2")),
      store.appendFenced(draft("b", "b2"), { token: lease.token + 1 }),
    ]);
    assert.equal(store.stats().groups - before, 1);
    assert.deepStrictEqual(results, [
      2,
      "StaleFencingToken",
      "SessionNotFound",
      3,
      "StaleFencingToken",
    ]);
    assert.deepStrictEqual((await store.read("a")).map((e) => e.seq), [1, 2, 3]);
    assert.deepStrictEqual((await store.read("b")).map((e) => e.seq), [1]);
    assert.deepStrictEqual(await store.list(), ["a", "b"]);
    assert.deepStrictEqual((await store.appendFenced(draft("b", "b3"), lease)).seq, 2);
  } finally {
    await store.close();
    await (await harness("lean")).cleanup();
  }
});

test("a group whose heads the writer knows: a stale token is refused, the rest written at the known heads with their tokens and node", async () => {
  const store = await PostgresSessionStore.open({
    url,
    schema: "known",
    listen: false,
    node: "node-k",
  });
  const sql = postgres(url, { onnotice: () => {} });
  try {
    // The creates commit through this writer, so it knows both heads (1): the next group reads none of them.
    await Promise.all(["a", "b", "c"].map((id) => store.append(draft(id, "", "new"))));
    const lease = (await store.leases.acquire("a", "node-k", 60_000))!;
    const results = await outcomes([
      store.appendFenced(draft("a", "a1"), lease),
      store.appendFenced(draft("b", "b1"), { token: 7 }),
      store.append(draft("c", "c1")),
      store.appendFenced(draft("a", "a2"), lease),
    ]);
    assert.deepStrictEqual(results, [2, "StaleFencingToken", 2, 3]);
    const rows = await sql.unsafe(
      `SELECT session_id, seq, node, fencing_token::int AS token FROM "known".session_events ORDER BY 1, 2`,
    );
    assert.deepStrictEqual(rows.map((r) => [r.session_id, Number(r.seq), r.node, r.token]), [
      ["a", 1, "node-k", null],
      ["a", 2, "node-k", lease.token],
      ["a", 3, "node-k", lease.token],
      ["b", 1, "node-k", null],
      ["c", 1, "node-k", null],
      ["c", 2, "node-k", null],
    ]);
    // The heads it now knows are the ones it committed: the next group follows them.
    assert.deepStrictEqual(
      await outcomes([store.append(draft("c", "c2")), store.appendFenced(draft("a", "a3"), lease)]),
      [3, 4],
    );
  } finally {
    await sql.end();
    await store.close();
    await (await harness("known")).cleanup();
  }
});

test("a session another writer creates while a group's create waits on it: the group's drafts to it are written after it", async () => {
  const store = await PostgresSessionStore.open({ url, schema: "race", listen: false });
  const sql = postgres(url, { onnotice: () => {} });
  try {
    await store.append(draft("other", "", "new"));
    const created = draft("r", "", "new");
    let group: Promise<(number | string)[]> | undefined;
    await sql.begin(async (tx) => {
      // The other writer holds its uncommitted create of "r" while the group runs into it.
      await tx.unsafe(
        "INSERT INTO race.session_heads VALUES ('r', 1); INSERT INTO race.session_events VALUES " +
          `('r', 1, '${created.id}', '1970-01-01T00:00:00.000Z', 'session/created', NULL, '{}')`,
      );
      group = outcomes([
        store.append(draft("r", "", "new")),
        store.append(draft("r", "r1")),
        store.append(draft("other", "o1")),
      ]);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const waiting = await sql.unsafe(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH input%'",
        );
        if (waiting.length > 0) break;
        if (Date.now() > deadline) {
          throw new Error("the group never waited on the other writer's create");
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    // The group's create of "r" is refused (the other writer's came first); its append follows that create.
    assert.deepStrictEqual(await group, ["SessionExists", 2, 2]);
    assert.deepStrictEqual((await store.read("r")).map((e) => [e.seq, e.type]), [
      [1, "session/created"],
      [2, "assistant/chunk"],
    ]);
    assert.equal(await store.head("r"), 2);
  } finally {
    await sql.end();
    await store.close();
    await (await harness("race")).cleanup();
  }
});
