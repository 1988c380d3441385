import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { canonicalJson } from "../../sessions/digest.ts";
import {
  exchangeBytes,
  jsonDifference,
  parseCassette,
  readCassette,
  requestKey,
} from "./cassette.ts";
import { CASSETTES } from "../../testing.ts";

Deno.test("requestKey() is the sha-256 of the canonical {role, request}, whatever the key order", () => {
  const a = requestKey("main", {
    system: "s",
    messages: [],
    params: { b: 1, a: [{ y: 2, x: 1 }] },
  });
  const b = requestKey("main", {
    params: { a: [{ x: 1, y: 2 }], b: 1 },
    messages: [],
    system: "s",
  });
  assert.equal(a, b);
  // sha256sum of '{"request":{"messages":[],"params":{"a":[{"x":1,"y":2}],"b":1},"system":"s"},"role":"main"}'
  assert.equal(a, "ba237d6e50588358e23c0e7b97c99e51457992574af62d8b968c09d04f7639ef");
  assert.notEqual(requestKey("titler", { messages: [] }), requestKey("main", { messages: [] }));
  assert.equal(
    canonicalJson({ role: "main", request: { system: undefined, messages: [], model: "m" } }),
    '{"request":{"messages":[],"model":"m"},"role":"main"}',
  );
});

Deno.test("jsonDifference() names the first differing path with both values", () => {
  assert.equal(
    jsonDifference({ a: [1, { b: "x" }] }, { a: [1, { b: "y" }] }, "request"),
    'request.a[1].b: recorded "x", got "y"',
  );
  assert.equal(jsonDifference([1, 2], [1, 2, 3], "list"), "list: recorded 2 items, got 3");
  assert.equal(jsonDifference({ a: 1 }, { a: 1, b: 2 }, "o"), "o.b: recorded nothing, got 2");
  assert.equal(jsonDifference({ a: [1] }, { a: [1] }, "same"), undefined);
});

Deno.test("parseCassette() refuses a bad cassette, naming the line and the problem", () => {
  const header = '{"cassette":"terret-llm","version":1,"created_at":"2026-01-01T00:00:00.000Z"}';
  const fail = (text: string, message: string): void =>
    assert.throws(
      () => parseCassette(text, "x.jsonl"),
      (error: unknown) =>
        error instanceof TerretError && error.code === "CassetteInvalid" &&
        error.message === message,
    );
  fail("", 'Cannot read cassette "x.jsonl": line 1: the file is empty');
  fail(
    '{"a":1}\n',
    'Cannot read cassette "x.jsonl": line 1: the first line is not a cassette header',
  );
  fail(
    `${header}\n\n{oops\n`,
    `Cannot read cassette "x.jsonl": line 3: invalid JSON (Expected property name or '}' in JSON at position 1 (line 1 column 2))`,
  );
  fail(
    `${header}\n{"key":"abc","role":"main","request":{"messages":[]},"exchanges":[],"events":[]}\n`,
    'Cannot read cassette "x.jsonl": line 2: key: Invalid string: must match pattern /^[0-9a-f]{64}$/',
  );
});

Deno.test("readCassette() reads the shipped cassettes by URL", async () => {
  const plain = await readCassette(CASSETTES.plainText);
  assert.equal(plain.interactions.length, 1);
  const turn = await readCassette(CASSETTES.toolTurn);
  assert.deepStrictEqual(
    turn.interactions.map((interaction) => interaction.request.messages.length),
    [1, 3],
  );
  const interaction = turn.interactions[0]!;
  assert.equal(interaction.key, requestKey(interaction.role, interaction.request));
  const exchange = interaction.exchanges[0]!;
  assert.equal(exchangeBytes(exchange).byteLength, exchange.reads!.reduce((a, b) => a + b, 0));
  await assert.rejects(
    readCassette("/nonexistent/cassette.jsonl"),
    (error: unknown) =>
      error instanceof TerretError && error.code === "CassetteInvalid" &&
      error.message.startsWith(
        'Cannot read cassette "/nonexistent/cassette.jsonl": No such file or directory',
      ),
  );
});

Deno.test("exchangeBytes() returns base64 bodies byte for byte", () => {
  const bytes = exchangeBytes({
    method: "POST",
    url: "u",
    request_body: {},
    status: 200,
    body_base64: "/wBhYg==",
  });
  assert.deepStrictEqual([...bytes], [0xff, 0x00, 0x61, 0x62]);
});
