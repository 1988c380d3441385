import assert from "node:assert/strict";
import { createContext, defineEvent } from "@terret/hames";
import { z } from "zod";
import { deriveMessages, MemorySessionStore, SqliteSessionStore } from "@terret/core/sessions";
import { type Message, SessionLog } from "@terret/core";

const text = (role: "user" | "assistant", value: string): Message => ({
  role,
  parts: [{ type: "text", text: value }],
});

Deno.test("deriveMessages() served from the cache equals a full replay, with or without upto", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s" });
  assert.deepStrictEqual(await log.deriveMessages("s"), []);
  await log.append("s", { type: "user/message", payload: { content: "one" } });
  await log.append("s", { type: "assistant/chunk", payload: { kind: "text", text: "tw" } });
  await log.append("s", {
    type: "assistant/message",
    payload: { parts: [{ type: "text", text: "two" }] },
  });
  const cached = await log.deriveMessages("s");
  assert.deepStrictEqual(cached, [text("user", "one"), text("assistant", "two")]);
  assert.deepStrictEqual(cached, deriveMessages(await log.read("s")));
  assert.equal(Object.isFrozen(cached[0]), true);
  cached.pop();
  assert.deepStrictEqual(await log.deriveMessages("s"), [
    text("user", "one"),
    text("assistant", "two"),
  ]);
  await log.append("s", { type: "session/compacted", payload: { summary: "earlier" } });
  await log.append("s", { type: "user/message", payload: { content: "three" } });
  assert.deepStrictEqual(await log.deriveMessages("s"), [
    text("user", "earlier"),
    text("user", "three"),
  ]);
  assert.deepStrictEqual(await log.deriveMessages("s", { upto: 3 }), [text("user", "one")]);
});

Deno.test("deriveMessages() sees events another connection appended to a shared SQLite file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using ctx = createContext({ mode: "test" });
    const path = `${dir}/shared.db`;
    const stores = [SqliteSessionStore.open({ path }), SqliteSessionStore.open({ path })];
    const mine = new SessionLog(ctx, stores[0]!);
    const theirs = new SessionLog(ctx, stores[1]!);
    await mine.create({ session_id: "s" });
    await mine.append("s", { type: "user/message", payload: { content: "mine" } });
    assert.deepStrictEqual(await mine.deriveMessages("s"), [text("user", "mine")]);
    await theirs.append("s", { type: "context/injected", payload: { content: "theirs" } });
    await mine.append("s", { type: "user/message", payload: { content: "mine again" } });
    assert.deepStrictEqual(await mine.deriveMessages("s"), [
      text("user", "mine"),
      text("user", "theirs"),
      text("user", "mine again"),
    ]);
    for (const store of stores) await store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deriveMessages() stays exact when the cache evicts and when concurrent calls share a catch-up", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore(), { historyCacheSessions: 1 });
  for (const id of ["a", "b"]) {
    await log.create({ session_id: id });
    await log.append(id, { type: "user/message", payload: { content: `hi ${id}` } });
  }
  for (let round = 0; round < 3; round++) {
    const [a1, b1, a2] = await Promise.all([
      log.deriveMessages("a"),
      log.deriveMessages("b"),
      log.deriveMessages("a"),
    ]);
    assert.deepStrictEqual([a1, b1, a2], [[text("user", "hi a")], [text("user", "hi b")], [
      text("user", "hi a"),
    ]]);
  }
  assert.throws(
    () => new SessionLog(ctx, new MemorySessionStore(), { historyCacheSessions: 0 }),
    {
      message:
        "Cannot create the session log: historyCacheSessions must be a positive integer, got 0",
    },
  );
});

Deno.test("registering a projection drops the cache, so past events project through it", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  const Note = defineEvent("test/note", {
    mode: "emit",
    durable: true,
    description: "A test note",
    payload: z.object({ note: z.string() }),
  });
  const owner = ctx.scope("owner");
  log.registerEventType(owner, Note, { projection: null });
  await log.create({ session_id: "s" });
  await log.append("s", { type: "test/note", payload: { note: "visible later" } });
  assert.deepStrictEqual(await log.deriveMessages("s"), []);
  await owner.dispose();
  log.registerEventType(ctx, Note, {
    projection: (event, history) =>
      void history.push(text("user", (event.payload as { note: string }).note)),
  });
  assert.deepStrictEqual(await log.deriveMessages("s"), [text("user", "visible later")]);
});
