import assert from "node:assert/strict";
import { z } from "zod";
import {
  ConfigUpdated,
  createContext,
  createMemoryLogger,
  defineEvent,
  definePlugin,
  defineService,
  Loader,
  PluginFailed,
  Service,
  TerretError,
} from "./mod.ts";

const Db = defineService<{ url: string }>("db");
const Cache = defineService<{ hits: number }>("cache");
const Asked = defineEvent("test/asked", { mode: "emit", description: "t", payload: z.string() });

function recorder(): {
  log: string[];
  plugin(name: string, opts?: { inject?: typeof Db[] }): ReturnType<typeof definePlugin>;
} {
  const log: string[] = [];
  return {
    log,
    plugin: (name, opts = {}) =>
      definePlugin({
        name,
        inject: opts.inject ?? [],
        apply(ctx) {
          log.push(`apply ${name}`);
          ctx.effect(() => () => void log.push(`dispose ${name}`));
        },
      }),
  };
}

Deno.test("a plugin parks until its injected services exist, then applies", async () => {
  const ctx = createContext({ mode: "test" });
  const { log, plugin } = recorder();
  const consumer = ctx.plugin(plugin("consumer", { inject: [Db] }));
  await consumer.settled();
  assert.equal(consumer.state, "pending");
  assert.deepStrictEqual(consumer.missing(), ["db"]);
  assert.deepStrictEqual(log, []);
  ctx.provide(Db, { url: "sqlite://a" });
  await ctx.idle();
  assert.equal(consumer.state, "active");
  assert.deepStrictEqual(log, ["apply consumer"]);
});

Deno.test("withdrawing a service stops its dependents before the provider stops", async () => {
  const ctx = createContext({ mode: "test" });
  const log: string[] = [];
  class DbService extends Service<{ url: string }> {
    static override readonly name = "db-service";
    static readonly key = Db;
    static readonly config = z.object({ url: z.string() });
    get url(): string {
      return this.config.url;
    }
    override start(): void {
      log.push(`start db ${this.config.url}`);
    }
    override stop(): void {
      log.push("stop db");
    }
  }
  const consumer = definePlugin({
    name: "consumer",
    inject: [Db],
    apply(c) {
      log.push(`apply consumer with ${c.get(Db).url}`);
      c.effect(() => () => void log.push("dispose consumer"));
    },
  });
  ctx.plugin(consumer);
  const db = ctx.plugin(DbService, { url: "one" });
  await ctx.idle();
  await db.dispose();
  assert.deepStrictEqual(log, [
    "start db one",
    "apply consumer with one",
    "dispose consumer",
    "stop db",
  ]);
  ctx.plugin(DbService, { url: "two" });
  await ctx.idle();
  assert.deepStrictEqual(log.slice(4), ["start db two", "apply consumer with two"]);
});

Deno.test("a replaced service restarts its dependents with the new instance", async () => {
  const ctx = createContext({ mode: "test" });
  const seen: string[] = [];
  ctx.plugin(
    definePlugin({ name: "reader", inject: [Db], apply: (c) => void seen.push(c.get(Db).url) }),
  );
  const first = ctx.provide(Db, { url: "a" });
  await ctx.idle();
  await first();
  ctx.provide(Db, { url: "b" });
  await ctx.idle();
  assert.deepStrictEqual(seen, ["a", "b"]);
});

Deno.test("a throwing apply disposes its partial effects and marks the plugin failed", async () => {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "test", logger });
  const order: string[] = [];
  const failures: string[] = [];
  ctx.on(PluginFailed, ({ id, error }) => void failures.push(`${id}: ${(error as Error).message}`));
  const broken = ctx.plugin(definePlugin({
    name: "broken",
    apply(c) {
      c.on(Asked, () => {});
      c.effect(() => () => void order.push("partial effect disposed"));
      throw new Error("cannot start");
    },
  }));
  await broken.settled();
  assert.equal(broken.state, "failed");
  assert.equal((broken.error as Error).message, "cannot start");
  assert.deepStrictEqual(order, ["partial effect disposed"]);
  assert.equal(ctx.listenerCount(Asked), 0);
  assert.deepStrictEqual(failures, ["broken: cannot start"]);
  assert.deepStrictEqual(logger.records.map((r) => r.message), ['Plugin "broken" failed to start']);
});

Deno.test("an invalid config is refused at mount with the key path", () => {
  const ctx = createContext({ mode: "test" });
  const plugin = definePlugin({
    name: "typed",
    config: z.object({ port: z.number().int(), host: z.string().default("127.0.0.1") }),
    apply() {},
  });
  assert.throws(
    () => ctx.plugin(plugin, { port: "80" }, { id: "interfaces.ws" }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ConfigInvalid" &&
      error.message ===
        'Cannot configure "interfaces.ws": config.port: Invalid input: expected number, received string',
  );
  assert.equal(ctx.effectCount, 0);
});

Deno.test("loader: boot order emerges from inject, whatever the row order", async () => {
  const ctx = createContext({ mode: "test" });
  const log: string[] = [];
  const loader = new Loader(ctx);
  await loader.load([
    {
      id: "app",
      plugin: definePlugin({ name: "app", inject: [Cache, Db], apply: () => void log.push("app") }),
    },
    {
      id: "cache",
      plugin: definePlugin({
        name: "cache",
        inject: [Db],
        provides: [Cache],
        apply: (c) => {
          log.push("cache");
          c.provide(Cache, { hits: 0 });
        },
      }),
    },
    {
      id: "db",
      plugin: definePlugin({
        name: "db",
        provides: [Db],
        apply: (c) => void c.provide(Db, { url: "x" }),
      }),
    },
    {
      id: "off",
      plugin: definePlugin({ name: "off", apply: () => void log.push("off") }),
      disabled: true,
    },
  ]);
  assert.deepStrictEqual(log, ["cache", "app"]);
  assert.equal(loader.fiber("off"), undefined);
  assert.deepStrictEqual(loader.rows().map((row) => row.id), ["app", "cache", "db", "off"]);
});

Deno.test("loader: a dependency cycle is a boot error that prints the cycle", async () => {
  const ctx = createContext({ mode: "test" });
  const A = defineService<number>("svc.a");
  const B = defineService<number>("svc.b");
  const C = defineService<number>("svc.c");
  const make = (name: string, inject: typeof A, provides: typeof A) =>
    definePlugin({
      name,
      inject: [inject],
      provides: [provides],
      apply: (c) => void c.provide(provides, 1),
    });
  await assert.rejects(
    new Loader(ctx).load([
      { id: "row.a", plugin: make("a", C, A) },
      { id: "row.b", plugin: make("b", A, B) },
      { id: "row.c", plugin: make("c", B, C) },
    ]),
    (error: unknown) =>
      error instanceof TerretError && error.code === "DependencyCycle" &&
      error.message ===
        'Cannot boot: dependency cycle: row.a (needs "svc.c") -> row.c (needs "svc.b") -> row.b (needs "svc.a") -> row.a',
  );
});

Deno.test("loader: a missing provider and a failed row are named", async () => {
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  await assert.rejects(
    new Loader(ctx).load([{
      id: "needy",
      plugin: definePlugin({ name: "needy", inject: [Db], apply() {} }),
    }]),
    /^TerretError: Cannot boot: row "needy" waits for "db", which no row provides$/,
  );
  const ctx2 = createContext({ mode: "test", logger: createMemoryLogger() });
  await assert.rejects(
    new Loader(ctx2).load([{
      id: "llm.main",
      plugin: definePlugin({
        name: "x",
        apply() {
          throw new Error("no api key");
        },
      }),
    }]),
    (error: unknown) =>
      error instanceof TerretError && error.code === "BootFailed" &&
      error.message === 'Cannot boot: row "llm.main" failed to start: no api key',
  );
});

Deno.test("reconfigure: a service hook applies in place and config/updated follows", async () => {
  const ctx = createContext({ mode: "test" });
  const updates: unknown[] = [];
  ctx.on(ConfigUpdated, ({ id, config }) => void updates.push([id, config]));
  class Limits extends Service<{ max: number }> {
    static readonly config = z.object({ max: z.number().int().positive() });
    applied: number[] = [];
    override reconfigure(config: { max: number }): void {
      this.applied.push(config.max);
    }
  }
  const loader = new Loader(ctx);
  await loader.load([{ id: "limits", plugin: Limits, config: { max: 1 } }]);
  const instance = loader.fiber("limits")!.instance as Limits;
  await loader.reconfigure("limits", { max: 5 });
  assert.deepStrictEqual(instance.applied, [5]);
  assert.deepStrictEqual(instance.config, { max: 5 });
  assert.deepStrictEqual(updates, [["limits", { max: 5 }]]);
  await assert.rejects(loader.reconfigure("limits", { max: -1 }), /config\.max: Too small/);
  await assert.rejects(
    loader.reconfigure("nope", {}),
    /Cannot reconfigure row "nope": no such row/,
  );
  assert.deepStrictEqual(updates, [["limits", { max: 5 }]]);
});

Deno.test("reconfigure: a throwing hook rolls back its effects and the config; no config/updated", async () => {
  const ctx = createContext({ mode: "test" });
  const updates: unknown[] = [];
  const log: string[] = [];
  ctx.on(ConfigUpdated, ({ id }) => void updates.push(id));
  class Picky extends Service<{ mode: string }> {
    static readonly config = z.object({ mode: z.string() });
    override reconfigure(config: { mode: string }): void {
      this.ctx.effect(() => () => void log.push(`rolled back ${config.mode}`));
      this.ctx.on(Asked, () => {});
      if (config.mode === "bad") throw new Error("mode bad is not supported");
    }
  }
  const loader = new Loader(ctx);
  await loader.load([{ id: "picky", plugin: Picky, config: { mode: "good" } }]);
  const fiber = loader.fiber("picky")!;
  const effectsBefore = (fiber.instance as Picky).ctx.effectCount;
  await assert.rejects(loader.reconfigure("picky", { mode: "bad" }), /mode bad is not supported/);
  assert.deepStrictEqual(log, ["rolled back bad"]);
  assert.equal((fiber.instance as Picky).ctx.effectCount, effectsBefore);
  assert.equal(ctx.listenerCount(Asked), 0);
  assert.deepStrictEqual(fiber.config, { mode: "good" });
  assert.deepStrictEqual((fiber.instance as Picky).config, { mode: "good" });
  assert.deepStrictEqual(updates, []);
  assert.deepStrictEqual(loader.rows()[0]!.config, { mode: "good" });
});

Deno.test("reconfigure: a functional plugin restarts, and restarts with the old config if the new one fails", async () => {
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const log: string[] = [];
  const updates: unknown[] = [];
  ctx.on(ConfigUpdated, ({ config }) => void updates.push(config));
  const plugin = definePlugin({
    name: "fn",
    config: z.object({ n: z.number() }),
    apply(c, config) {
      if (config.n < 0) throw new Error("negative");
      log.push(`apply ${config.n}`);
      c.effect(() => () => void log.push(`dispose ${config.n}`));
    },
  });
  const loader = new Loader(ctx);
  await loader.load([{ id: "fn", plugin, config: { n: 1 } }]);
  await loader.reconfigure("fn", { n: 2 });
  await assert.rejects(loader.reconfigure("fn", { n: -1 }), /negative/);
  assert.deepStrictEqual(log, ["apply 1", "dispose 1", "apply 2", "dispose 2", "apply 2"]);
  assert.equal(loader.fiber("fn")!.state, "active");
  assert.deepStrictEqual(loader.fiber("fn")!.config, { n: 2 });
  assert.deepStrictEqual(updates, [{ n: 2 }]);
});

Deno.test("a functional plugin's inject may depend on its config, re-derived when the config is replaced", async () => {
  const ctx = createContext({ mode: "test" });
  const applied: string[] = [];
  const plugin = definePlugin({
    name: "needs",
    config: z.object({ use: z.enum(["none", "db", "cache"]) }),
    inject: (config) => config.use === "db" ? [Db] : config.use === "cache" ? [Cache] : [],
    apply(_c, config) {
      applied.push(config.use);
    },
  });
  const loader = new Loader(ctx);
  await loader.load([{ id: "needs", plugin, config: { use: "none" } }]);
  const fiber = loader.fiber("needs")!;
  await loader.reconfigure("needs", { use: "db" });
  assert.deepStrictEqual([fiber.state, fiber.missing()], ["pending", ["db"]]);
  ctx.provide(Db, { url: "sqlite://a" });
  await ctx.idle();
  assert.equal(fiber.state, "active");
  await loader.reconfigure("needs", { use: "cache" });
  assert.deepStrictEqual([fiber.state, fiber.missing()], ["pending", ["cache"]]);
  assert.throws(() => loader.check(), /row "needs" waits for "cache", which no row provides/);
  assert.deepStrictEqual(applied, ["none", "db"]);
});

Deno.test("disposing the root unmounts every plugin, consumers before providers", async () => {
  const ctx = createContext({ mode: "test" });
  const log: string[] = [];
  const provider = definePlugin({
    name: "provider",
    provides: [Db],
    apply(c) {
      // Registered before the provide, so it tears down after the withdrawal.
      c.effect(() => () => void log.push("provider down"));
      c.provide(Db, { url: "x" });
    },
  });
  const consumer = definePlugin({
    name: "consumer",
    inject: [Db],
    apply: (c) => void c.effect(() => () => void log.push("consumer down")),
  });
  // Mounted consumer first: disposal order alone would take the provider down first.
  const fibers = [ctx.plugin(consumer), ctx.plugin(provider)];
  await ctx.idle();
  await ctx.dispose();
  assert.deepStrictEqual(log, ["consumer down", "provider down"]);
  assert.deepStrictEqual(fibers.map((fiber) => fiber.state), ["disposed", "disposed"]);
  assert.equal(ctx.effectCount, 0);
});

Deno.test("a teardown that throws while a dependency restarts is reported, not an unhandled rejection", async () => {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "test", logger });
  const starts: string[] = [];
  ctx.plugin(definePlugin({
    name: "fragile",
    inject: [Db],
    apply(c) {
      starts.push(c.get(Db).url);
      c.effect(() => () => {
        throw new Error("teardown broke");
      });
    },
  }));
  const first = ctx.provide(Db, { url: "a" });
  await ctx.idle();
  await first();
  ctx.provide(Db, { url: "b" });
  await ctx.idle();
  assert.deepStrictEqual(starts, ["a", "b"]);
  assert.deepStrictEqual(
    logger.records.map((r) => [r.message, (r.fields.error as Error).message]),
    [
      ['Plugin "fragile" did not stop cleanly', "teardown broke"],
    ],
  );
  // At shutdown the withdrawal of "b" stops it again: reported the same way, and disposal completes.
  await ctx.dispose();
  assert.equal(logger.records.length, 2);
  assert.equal(ctx.effectCount, 0);
});
