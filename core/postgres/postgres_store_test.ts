import assert from "node:assert/strict";
import postgres from "postgres";
import { TerretError } from "../errors.ts";
import { PostgresSessionStore } from "./postgres_store.ts";
import { SCHEMA_VERSION } from "./_schema.ts";
import { runSessionStoreConformance } from "../../tests/conformance/session_store.ts";
import { freePort, postgresLane } from "../../tests/postgres/cluster.ts";

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
  runSessionStoreConformance("postgres", () => harness(), { persistent: true });
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

test("a database that is down is named without its password", async () => {
  const port = freePort();
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
