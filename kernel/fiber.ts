/**
 * Fibers: the runtime record of one mounted plugin, parking until its injected services exist and restarting
 * when they are replaced.
 *
 * @module
 */
import type { Context } from "./context.ts";
import { TerretError } from "./hames_errors.ts";
import { ConfigUpdated, PluginFailed } from "./events.ts";
import {
  isServiceClass,
  type Plugin,
  type PluginLike,
  pluginName,
  type Service,
  type ServiceClass,
} from "./plugin.ts";
import type { ServiceKey } from "./service_key.ts";
import { INTERNAL } from "./_internal.ts";
import type { RootState, ServiceWatcher } from "./_realm.ts";
import { parseConfig } from "./config.ts";

/**
 * The lifecycle state of a mounted plugin.
 *
 * `pending`: parked until every injected service resolves. `starting`/`stopping`: a transition is running.
 * `active`: applied. `failed`: apply threw (its partial effects were disposed); only `reconfigure` retries it.
 * `disposed`: unmounted for good.
 */
export type FiberState = "pending" | "starting" | "active" | "stopping" | "failed" | "disposed";

/** Options for mounting a plugin. */
export interface MountOptions {
  /** The id reported in errors and `config/updated` (default: the plugin name). */
  readonly id?: string;
  /** Keys this plugin's subtree provides for itself instead of inheriting. */
  readonly isolate?: readonly string[];
}

/**
 * One mounted plugin. Created by `ctx.plugin()` or the loader.
 *
 * Contract: transitions (start, stop, reconfigure, dispose) run one at a time in request order; `settled()`
 * resolves once every transition requested so far has finished.
 */
export class Fiber {
  /** The fiber id (the row id when mounted by the loader). */
  readonly id: string;
  /** The plugin this fiber runs. */
  readonly plugin: PluginLike;
  readonly #home: Context;
  readonly #runtime: PluginRuntime;
  #inject: readonly ServiceKey<unknown>[] = [];
  #config: unknown;
  #state: FiberState = "pending";
  #error: unknown;
  #run: Context | undefined;
  #instance: Service | undefined;
  #deps = new Map<string, unknown>();
  #queue: Promise<void> = Promise.resolve();

  /** @internal Use `ctx.plugin()`. */
  constructor(parent: Context, plugin: PluginLike, config: unknown, options: MountOptions = {}) {
    this.plugin = plugin;
    this.id = options.id ?? pluginName(plugin);
    this.#setConfig(parseConfig(plugin, config, this.id));
    this.#runtime = PluginRuntime.of(parent[INTERNAL]().realm.root);
    this.#home = options.isolate !== undefined && options.isolate.length > 0
      ? parent.isolate(options.isolate, this.id)
      : parent.scope(this.id);
    this.#home.effect(() => {
      this.#runtime.fibers.add(this);
      return () => {
        this.#state = "disposed";
        this.#runtime.fibers.delete(this);
      };
    }, `fiber ${this.id}`);
    void this.sync();
  }

  /** The current state. */
  get state(): FiberState {
    return this.#state;
  }

  /** Why the plugin failed, when `state` is `failed`. */
  get error(): unknown {
    return this.#error;
  }

  /** The current validated config. */
  get config(): unknown {
    return this.#config;
  }

  /** The service instance, for class plugins that are active. */
  get instance(): Service | undefined {
    return this.#instance;
  }

  /** The injected keys that do not resolve right now. */
  missing(): string[] {
    return this.#inject.filter((key) => !this.#home.has(key)).map((key) => key.key);
  }

  /** Resolves once every transition requested so far has finished. */
  settled(): Promise<void> {
    return this.#queue;
  }

  /** Re-evaluates whether the plugin should start or restart; resolves when that is done. */
  sync(): Promise<void> {
    return this.#enqueue(() => this.#syncOnce());
  }

  /**
   * Replaces the config wholesale. A class service with a `reconfigure` hook applies it in place (rolled back if
   * the hook throws); otherwise the plugin restarts with it (and restarts with the old config if that fails).
   * Emits `config/updated` only on success.
   *
   * @throws {TerretError} `ConfigInvalid` (nothing changed), or whatever the hook or restart threw (rolled back)
   */
  reconfigure(config: unknown): Promise<void> {
    const parsed = parseConfig(this.plugin, config, this.id);
    return this.#enqueue(async () => {
      if (this.#state === "disposed") {
        throw new TerretError("ContextDisposed", `Cannot reconfigure "${this.id}": it is disposed`);
      }
      if (this.#state === "active" && typeof this.#instance?.reconfigure === "function") {
        await this.#reconfigureInPlace(this.#instance, parsed);
      } else if (this.#state === "active" || this.#state === "failed") {
        await this.#restartWith(parsed);
      } else {
        this.#setConfig(parsed);
        await this.#syncOnce();
      }
      this.#home.emit(ConfigUpdated, { id: this.id, config: parsed });
    });
  }

  /** Unmounts the plugin for good: its effects are disposed newest first. */
  dispose(): Promise<void> {
    return this.#home.dispose();
  }

  async #reconfigureInPlace(instance: Service, parsed: unknown): Promise<void> {
    const scope = this.#run![INTERNAL]().scope;
    const mark = scope.mark();
    try {
      await instance.reconfigure!(parsed);
    } catch (error) {
      await scope.rollback(mark);
      throw error;
    }
    instance.config = parsed;
    this.#config = parsed;
  }

  async #restartWith(parsed: unknown): Promise<void> {
    const previous = this.#config;
    if (this.#state === "active") await this.#stop();
    this.#setConfig(parsed);
    this.#state = "pending";
    await this.#syncOnce();
    if (this.state !== "failed") return;
    const error = this.#error;
    this.#setConfig(previous);
    this.#state = "pending";
    await this.#syncOnce();
    throw error;
  }

  /** Sets the config and the injected keys it implies (a functional plugin's `inject` may depend on it). */
  #setConfig(config: unknown): void {
    const inject = this.plugin.inject;
    this.#inject = typeof inject === "function" ? inject(config) : inject ?? [];
    this.#config = config;
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.then(noop, noop);
    return run;
  }

  async #syncOnce(): Promise<void> {
    if (this.#state === "pending") {
      if (this.#home.disposed || this.missing().length > 0) return;
      await this.#start();
    } else if (this.#state === "active" && this.#depsChanged()) {
      await this.#stop();
      if (this.missing().length === 0) await this.#start();
    }
  }

  #depsChanged(): boolean {
    for (const key of this.#inject) {
      if (this.#home.maybe(key) !== this.#deps.get(key.key)) return true;
    }
    return false;
  }

  /** True when this fiber was started with `value` under `key`. */
  usesService(key: string, value: unknown): boolean {
    return (this.#state === "active" || this.#state === "starting") &&
      this.#deps.get(key) === value;
  }

  async #start(): Promise<void> {
    this.#state = "starting";
    this.#deps = new Map(this.#inject.map((key) => [key.key, this.#home.maybe(key)]));
    const run = this.#home.scope(`${this.id}#run`);
    this.#run = run;
    try {
      if (isServiceClass(this.plugin)) await this.#startService(this.plugin, run);
      else await (this.plugin as Plugin<unknown>).apply(run, this.#config);
      this.#state = "active";
    } catch (error) {
      await run.dispose().catch(noop);
      this.#run = undefined;
      this.#instance = undefined;
      if (this.#home.disposed) {
        this.#state = "disposed";
        return;
      }
      this.#state = "failed";
      this.#error = error;
      this.#home.logger.log("error", `Plugin "${this.id}" failed to start`, { error });
      this.#home.emit(PluginFailed, { id: this.id, plugin: pluginName(this.plugin), error });
    }
  }

  async #startService(cls: ServiceClass, run: Context): Promise<void> {
    const instance = new cls(run, this.#config);
    run.effect(() => () => instance.stop(), `stop ${this.id}`);
    await instance.start();
    this.#instance = instance;
    if (cls.key !== undefined) run.provide(cls.key, instance);
  }

  async #stop(): Promise<void> {
    this.#state = "stopping";
    const run = this.#run;
    this.#run = undefined;
    this.#instance = undefined;
    try {
      await run?.dispose();
    } catch (error) {
      // Every teardown has run; a failing one is reported, never left to reject a background sync.
      this.#home.logger.log("error", `Plugin "${this.id}" did not stop cleanly`, { error });
    } finally {
      this.#state = this.#home.disposed ? "disposed" : "pending";
    }
  }
}

/** The per-tree registry of fibers, reacting to service changes. */
export class PluginRuntime implements ServiceWatcher {
  /** Every live fiber of the tree. */
  readonly fibers: Set<Fiber> = new Set();

  /** The runtime of a context tree, created on first use. */
  static of(root: RootState): PluginRuntime {
    if (root.runtime === undefined) {
      root.runtime = new PluginRuntime();
      root.watchers.add(root.runtime);
    }
    return root.runtime as PluginRuntime;
  }

  /** Re-evaluates every parked or running fiber. */
  servicesChanged(): void {
    for (const fiber of this.fibers) {
      if (fiber.state === "pending" || fiber.state === "active") void fiber.sync();
    }
  }

  /** Stops every fiber started with `value` under `key`, and waits for it. */
  async withdrawn(key: string, value: unknown): Promise<void> {
    const dependents = [...this.fibers].filter((fiber) => fiber.usesService(key, value));
    await Promise.all(dependents.map((fiber) => fiber.sync()));
  }

  /** Resolves once no fiber has a transition in flight. */
  async idle(): Promise<void> {
    for (;;) {
      const queues = [...this.fibers].map((fiber) => fiber.settled());
      await Promise.all(queues);
      const after = [...this.fibers].map((fiber) => fiber.settled());
      if (after.length === queues.length && after.every((queue, i) => queue === queues[i])) return;
    }
  }
}

function noop(): void {}
