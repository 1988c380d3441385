import assert from "node:assert/strict";
import { z } from "zod";
import { createContext, defineEvent, defineService, TerretError } from "./mod.ts";

const Pinged = defineEvent("test/pinged", { mode: "emit", description: "t", payload: z.string() });
const Guarded = defineEvent("test/guarded", {
  mode: "waterfall",
  description: "t",
  payload: z.string(),
  result: z.string(),
});
const Store = defineService<{ name: string }>("store");

Deno.test("effects dispose newest first, each once", async () => {
  const ctx = createContext({ mode: "test" });
  const order: number[] = [];
  ctx.effect(() => () => void order.push(1));
  ctx.effect(() => () => void order.push(2));
  ctx.effect(() => async () => {
    await Promise.resolve();
    order.push(3);
  });
  assert.equal(ctx.effectCount, 3);
  await ctx.dispose();
  await ctx.dispose();
  assert.deepStrictEqual(order, [3, 2, 1]);
  assert.equal(ctx.effectCount, 0);
});

Deno.test("a disposer is idempotent and removes its effect from the context", async () => {
  const ctx = createContext({ mode: "test" });
  let teardowns = 0;
  const dispose = ctx.effect(() => () => void teardowns++, "counted");
  assert.deepStrictEqual(ctx.effectLabels(), ["counted"]);
  assert.equal(dispose.active, true);
  await dispose();
  await dispose();
  assert.equal(dispose.active, false);
  assert.equal(teardowns, 1);
  assert.deepStrictEqual(ctx.effectLabels(), []);
  await ctx.dispose();
  assert.equal(teardowns, 1);
});

Deno.test("disposers work with using and await using", async () => {
  const ctx = createContext({ mode: "test" });
  const order: string[] = [];
  {
    using _sync = ctx.effect(() => () => void order.push("sync"));
    await using _async = ctx.effect(() => async () => {
      await Promise.resolve();
      order.push("async");
    });
    order.push("body");
  }
  assert.deepStrictEqual(order, ["body", "async", "sync"]);
  assert.equal(ctx.effectCount, 0);
  {
    await using child = ctx.scope("block");
    child.effect(() => () => void order.push("scoped"));
  }
  assert.deepStrictEqual(order, ["body", "async", "sync", "scoped"]);
});

Deno.test("every teardown runs even when some throw; the failures are rethrown together", async () => {
  const ctx = createContext({ mode: "test" });
  const order: number[] = [];
  ctx.effect(() => () => void order.push(1));
  ctx.effect(() => () => {
    throw new Error("two");
  });
  ctx.effect(() => () => {
    throw new Error("three");
  });
  await assert.rejects(ctx.dispose(), (error: unknown) => {
    assert.ok(error instanceof AggregateError);
    assert.deepStrictEqual(error.errors.map((e: Error) => e.message), ["three", "two"]);
    return true;
  });
  assert.deepStrictEqual(order, [1]);
});

Deno.test("registering on a disposed context is refused with ContextDisposed before setup runs", async () => {
  const ctx = createContext({ mode: "test" });
  await ctx.dispose();
  let torn = false;
  assert.throws(
    () => ctx.effect(() => () => void (torn = true), "late"),
    (error: unknown) => error instanceof TerretError && error.code === "ContextDisposed",
  );
  assert.equal(torn, false); // the context refused before running setup
  assert.throws(
    () => ctx.on(Pinged, () => {}),
    /Cannot on test\/pinged: context "root" is disposed/,
  );
  assert.throws(() => ctx.provide(Store, { name: "x" }), /ContextDisposed|is disposed/);
});

Deno.test("on() listeners are effects: disposing the owner removes them", async () => {
  const ctx = createContext({ mode: "test" });
  const child = ctx.scope("child");
  const heard: string[] = [];
  child.on(Pinged, (s) => void heard.push(`child:${s}`));
  ctx.on(Pinged, (s) => void heard.push(`root:${s}`));
  ctx.emit(Pinged, "a");
  assert.equal(ctx.listenerCount(Pinged), 2);
  await child.dispose();
  assert.equal(ctx.listenerCount(Pinged), 1);
  ctx.emit(Pinged, "b");
  assert.deepStrictEqual(heard, ["child:a", "root:a", "root:b"]);
});

Deno.test("services resolve by key; a second provide at one level conflicts", async () => {
  const ctx = createContext({ mode: "test" });
  assert.equal(ctx.maybe(Store), undefined);
  assert.throws(
    () => ctx.get(Store),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ServiceMissing" &&
      error.message === 'Cannot resolve service "store": nothing provides it in context "root"',
  );
  const withdraw = ctx.provide(Store, { name: "a" });
  assert.equal(ctx.get(Store).name, "a");
  assert.throws(() => ctx.provide(Store, { name: "b" }), /already provided/);
  await withdraw();
  assert.equal(ctx.has(Store), false);
  ctx.provide(Store, { name: "b" });
  assert.equal(ctx.get(Store).name, "b");
});

Deno.test("fork: inherits services, shadows locally, and its registrations die with it", async () => {
  const ctx = createContext({ mode: "test" });
  ctx.provide(Store, { name: "root" });
  const agent = ctx.fork("agent-1");
  assert.equal(agent.get(Store).name, "root");
  agent.provide(Store, { name: "agent" });
  assert.equal(agent.get(Store).name, "agent");
  assert.equal(ctx.get(Store).name, "root");

  const heard: string[] = [];
  ctx.on(Pinged, (s) => void heard.push(`root:${s}`));
  agent.on(Pinged, (s) => void heard.push(`agent:${s}`));
  agent.on(Pinged, (s) => void heard.push(`agent2:${s}`));
  assert.equal(agent.listenerCount(), 2);
  assert.equal(ctx.listenerCount(), 1);

  // A fork's listeners hear only dispatches from the fork's subtree; the root's hear everything.
  ctx.emit(Pinged, "from-root");
  agent.emit(Pinged, "from-agent");
  const grandchild = agent.fork("sub");
  grandchild.emit(Pinged, "from-sub");
  const sibling = ctx.fork("agent-2");
  sibling.emit(Pinged, "from-sibling");
  assert.deepStrictEqual(heard, [
    "root:from-root",
    "root:from-agent",
    "agent:from-agent",
    "agent2:from-agent",
    "root:from-sub",
    "agent:from-sub",
    "agent2:from-sub",
    "root:from-sibling",
  ]);

  const rootEffects = ctx.effectCount;
  await agent.dispose();
  assert.equal(agent.listenerCount(), 0);
  assert.equal(ctx.listenerCount(), 1);
  assert.equal(agent.has(Store), true); // the fork's own Store is gone; it sees the root's again
  assert.equal(agent.get(Store).name, "root");
  assert.equal(ctx.effectCount, rootEffects - 1); // the fork's scope detached from the root
  heard.length = 0;
  ctx.emit(Pinged, "after");
  assert.deepStrictEqual(heard, ["root:after"]);
});

Deno.test("fork: waterfall listeners compose ancestors first, then the fork's own", () => {
  const ctx = createContext({ mode: "test" });
  const agent = ctx.fork("agent");
  agent.on(Guarded, (s, next) => next(s + ">agent"));
  ctx.on(Guarded, (s, next) => next(s + ">root"));
  assert.equal(agent.waterfall(Guarded, "call", (s) => s), "call>root>agent");
  assert.equal(ctx.waterfall(Guarded, "call", (s) => s), "call>root");
});

Deno.test("fork with isolate does not inherit the isolated key", () => {
  const ctx = createContext({ mode: "test" });
  ctx.provide(Store, { name: "root" });
  const fork = ctx.fork("isolated", { isolate: [Store] });
  assert.equal(fork.maybe(Store), undefined);
  fork.provide(Store, { name: "own" });
  assert.equal(fork.get(Store).name, "own");
  assert.equal(ctx.get(Store).name, "root");
});

Deno.test("isolate: listed keys stay local, other services and listeners are shared", async () => {
  const ctx = createContext({ mode: "test" });
  const Other = defineService<string>("other");
  ctx.provide(Store, { name: "root" });
  const sub = ctx.isolate([Store], "sub");
  assert.equal(sub.maybe(Store), undefined);
  sub.provide(Store, { name: "sub" });
  sub.provide(Other, "shared"); // not isolated: lands in the parent realm
  assert.equal(ctx.get(Store).name, "root");
  assert.equal(ctx.get(Other), "shared");
  const heard: string[] = [];
  sub.on(Pinged, (s) => void heard.push(s));
  ctx.emit(Pinged, "root-dispatch"); // an isolate shares its parent's event level
  assert.deepStrictEqual(heard, ["root-dispatch"]);
  await sub.dispose();
  assert.equal(ctx.has(Other), false);
  assert.equal(ctx.listenerCount(Pinged), 0);
});
