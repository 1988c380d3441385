import assert from "node:assert/strict";
import { z } from "zod";
import { createContext, createMemoryLogger, defineEvent, Loader, TerretError } from "@terret/hames";
import { InvariantViolated, type InvariantViolatedPayload } from "./events.ts";
import { MemorySessionStore } from "./memory_store.ts";
import { normalizePayload } from "./normalize_payload.ts";
import { SessionLog } from "./session_log.ts";
import { SessionsKey } from "./sessions.ts";
import { sessionsPlugin } from "./sessions_plugin.ts";
import { sqliteStorePlugin } from "./sqlite_store_plugin.ts";

Deno.test("assertInvariant() in production reports a mismatch as a critical event and a logged error", async () => {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "production", logger });
  const log = new SessionLog(ctx, new MemorySessionStore());
  const seen: InvariantViolatedPayload[] = [];
  ctx.on(InvariantViolated, (payload) => void seen.push(payload));
  await log.create({ session_id: "s" });
  await log.append("s", { type: "user/message", payload: { content: "logged" } });
  const derived = await log.deriveMessages("s");
  const report = await log.assertInvariant([{
    role: "user",
    parts: [{ type: "text", text: "not logged" }],
  }], "s");
  assert.equal(report.ok, false);
  assert.deepStrictEqual(seen, [{
    session_id: "s",
    upto: null,
    outbound_digest: report.outbound_digest,
    derived_digest: report.derived_digest,
    first_difference: 0,
    severity: "critical",
  }]);
  assert.deepStrictEqual(logger.records.map((r) => [r.level, r.message]), [[
    "error",
    `Cannot send a model request for session "s": the outbound messages differ from the log's derivation at message 0 (outbound ${
      report.outbound_digest.slice(0, 12)
    }, derived ${report.derived_digest.slice(0, 12)})`,
  ]]);
  assert.equal((await log.assertInvariant(derived, "s")).ok, true);
  await ctx.dispose();
});

Deno.test("assertInvariant() in development throws LogInvariantViolation naming the first difference", async () => {
  const ctx = createContext({ mode: "development", logger: createMemoryLogger() });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s" });
  await log.append("s", { type: "user/message", payload: { content: "a" } });
  await log.append("s", { type: "user/message", payload: { content: "b" } });
  const derived = await log.deriveMessages("s");
  await assert.rejects(log.assertInvariant(derived.slice(0, 1), "s"), (error: unknown) => {
    assert.ok(error instanceof TerretError);
    assert.equal(error.code, "LogInvariantViolation");
    assert.equal(error.details?.first_difference, 1);
    return true;
  });
  assert.equal((await log.assertInvariant(derived.slice(0, 1), "s", { upto: 2 })).ok, true);
  await ctx.dispose();
});

Deno.test("assertInvariant() proves the cache's own history without reading the head again, and still flags a list the log moved past", async () => {
  const ctx = createContext({ mode: "development", logger: createMemoryLogger() });
  let heads = 0;
  const store = new MemorySessionStore();
  const head = store.head.bind(store);
  store.head = (sessionId) => {
    heads++;
    return head(sessionId);
  };
  const log = new SessionLog(ctx, store);
  await log.create({ session_id: "s" });
  await log.append("s", { type: "user/message", payload: { content: "a" } });
  const derived = await log.deriveMessages("s");
  const read = heads;
  assert.equal((await log.assertInvariant(derived, "s")).ok, true);
  assert.equal(heads, read, "the cache's own list is proven without a head read");
  // Equal by value but not the cache's objects: compared with a fresh derivation (one head read).
  assert.equal((await log.assertInvariant(structuredClone(derived), "s")).ok, true);
  assert.equal(heads, read + 1);
  // The log moved past the list: the cache no longer holds it, and the fresh derivation flags it.
  await log.append("s", { type: "user/message", payload: { content: "b" } });
  await assert.rejects(log.assertInvariant(derived, "s"), (error: unknown) => {
    assert.ok(error instanceof TerretError);
    assert.equal(error.code, "LogInvariantViolation");
    assert.equal(error.details?.first_difference, 1);
    return true;
  });
  await ctx.dispose();
});

Deno.test("scrubbers run over content values and content keys, never over structural fields, until disposed", async () => {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  const owner = ctx.scope("redactor");
  log.registerScrubber(owner, (text) => text.replaceAll(/sk-[a-z0-9]+/g, "[REDACTED]"));
  await log.create({ session_id: "s" });
  const call = await log.append("s", {
    type: "assistant/message",
    payload: {
      parts: [{
        type: "tool_call",
        id: "sk-abc1",
        name: "Bash sk-x1",
        args: { "sk-key9": "run sk-v2", n: 1 },
      }],
    },
  });
  assert.deepStrictEqual(call.payload, {
    parts: [{
      type: "tool_call",
      id: "sk-abc1",
      name: "Bash [REDACTED]",
      args: { "[REDACTED]": "run [REDACTED]", n: 1 },
    }],
  });
  const result = await log.append("s", {
    type: "tool/result",
    payload: {
      id: "sk-abc1",
      name: "Bash",
      content: [{ type: "text", text: "token sk-zz" }],
      is_error: false,
    },
  });
  assert.deepStrictEqual(result.payload, {
    id: "sk-abc1",
    name: "Bash",
    content: [{ type: "text", text: "token [REDACTED]" }],
    is_error: false,
  });
  await assert.rejects(
    log.append("s", {
      type: "tool/call",
      payload: { id: "c1", name: "X", args: { "sk-a": 1, "sk-b": 2 } },
    }),
    {
      code: "InvalidPayload",
      message:
        'Cannot append "tool/call": payload.args.sk-b collides with another key once scrubbed (both become "[REDACTED]")',
    },
  );
  await owner.dispose();
  const plain = await log.append("s", { type: "user/message", payload: { content: "sk-abc" } });
  assert.deepStrictEqual(plain.payload, { content: "sk-abc" });
  assert.equal(await log.head("s"), 4);
  await ctx.dispose();
});

Deno.test("normalizePayload() returns frozen plain JSON, folds -0 and keeps a __proto__ key as data", () => {
  const input = JSON.parse('{"a":[1,{"__proto__":{"x":1}}],"b":"é","c":null}');
  const normalized = normalizePayload("user/message", { ...input, d: undefined, z: -0 });
  assert.equal(normalized.json, '{"a":[1,{"__proto__":{"x":1}}],"b":"é","c":null,"z":0}');
  assert.equal(normalized.bytes, 55);
  assert.equal(Object.isFrozen(normalized.value), true);
  assert.deepStrictEqual(JSON.parse(normalized.json), normalized.value);
});

Deno.test("registerEventType() adds a durable type with its projection for as long as its owner lives", async () => {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  const Note = defineEvent("plugin/note", {
    mode: "emit",
    durable: true,
    owner: "test",
    description: "A model-visible note",
    payload: z.object({ note: z.string() }),
  });
  await log.create({ session_id: "s" });
  const owner = ctx.scope("notes");
  log.registerEventType(owner, Note, {
    projection: (event, history) =>
      void history.push({
        role: "user",
        parts: [{ type: "text", text: `note: ${(event.payload as { note: string }).note}` }],
      }),
  });
  await log.append("s", { type: "plugin/note", payload: { note: "hi" } });
  await assert.rejects(log.append("s", { type: "plugin/note", payload: { note: 1 } }), {
    code: "InvalidPayload",
    message:
      'Cannot append "plugin/note" to session "s": the payload breaks its schema: payload.note: Invalid input: expected string, received number',
  });
  assert.deepStrictEqual(await log.deriveMessages("s"), [{
    role: "user",
    parts: [{ type: "text", text: "note: hi" }],
  }]);
  await owner.dispose();
  await assert.rejects(log.append("s", { type: "plugin/note", payload: { note: "x" } }), {
    code: "UnknownEventType",
  });
  assert.deepStrictEqual(await log.deriveMessages("s"), []);
  await ctx.dispose();
});

Deno.test("the sessions.store row mounts a store plugin and the sessions plugin serves it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-rows-" });
  const ctx = createContext({ mode: "test" });
  try {
    const loader = new Loader(ctx);
    await loader.load([
      { id: "sessions", plugin: sessionsPlugin, config: { max_payload_bytes: 2048 } },
      { id: "sessions.store", plugin: sqliteStorePlugin, config: { path: `${dir}/s.db` } },
    ]);
    const sessions = ctx.get(SessionsKey);
    await sessions.create({ session_id: "s" });
    await assert.rejects(
      sessions.append("s", { type: "user/message", payload: { content: "x".repeat(3000) } }),
      {
        code: "PayloadTooLarge",
      },
    );
    await loader.reconfigure("sessions.store", { path: `${dir}/other.db` });
    assert.deepStrictEqual(await ctx.get(SessionsKey).list(), []);
    await loader.reconfigure("sessions.store", { path: `${dir}/s.db` });
    assert.deepStrictEqual(await ctx.get(SessionsKey).list(), ["s"]);
  } finally {
    await ctx.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});
