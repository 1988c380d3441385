/**
 * The context: a repository of services and an event bus, the handle every plugin works through.
 *
 * @module
 */
import type { Disposer, Teardown } from "./disposer.ts";
import type { EventDefinition, ListenerOf } from "./event.ts";
import { TerretError } from "./hames_errors.ts";
import { createStderrLogger, type Logger } from "./logger.ts";
import type { ServiceKey } from "./service_key.ts";
import * as bus from "./_bus.ts";
import { type ContextMode, Realm, RootState } from "./_realm.ts";
import { Scope } from "./_scope.ts";
import { type ContextInternals, INTERNAL } from "./_internal.ts";
import { Fiber, type MountOptions, PluginRuntime } from "./fiber.ts";
import type { PluginLike } from "./plugin.ts";

export type { ContextMode } from "./_realm.ts";

/** Options for {@linkcode createContext}. */
export interface CreateContextOptions {
  /** `development` (default) and `test` throw on contract violations; `production` logs them and skips. */
  readonly mode?: ContextMode;
  /** Where the kernel reports (default: JSON lines on standard error). */
  readonly logger?: Logger;
  /** Validate every dispatched payload against its event schema (default: true in `test` mode only). */
  readonly validatePayloads?: boolean;
  /** A label for diagnostics (default `"root"`). */
  readonly label?: string;
}

/** Options for {@linkcode Context.on}. */
export interface ListenOptions {
  /** Run before the listeners already registered at this level (discouraged; order should not matter). */
  readonly prepend?: boolean;
}

/** Options for {@linkcode Context.fork}. */
export interface ForkOptions {
  /** Keys the fork must not inherit from its ancestors. */
  readonly isolate?: readonly (string | ServiceKey<unknown>)[];
}

/**
 * Creates a root context.
 *
 * @example
 * ```ts
 * import { createContext, defineService } from "@terret/hames";
 * const Greeting = defineService<string>("greeting");
 * await using ctx = createContext({ mode: "test" });
 * ctx.provide(Greeting, "hello");
 * console.log(ctx.get(Greeting)); // "hello"
 * ```
 */
export function createContext(options: CreateContextOptions = {}): Context {
  const mode = options.mode ?? "development";
  const root = new RootState(
    mode,
    options.logger ?? createStderrLogger(),
    options.validatePayloads ?? mode === "test",
  );
  const label = options.label ?? "root";
  return Context[INTERNAL](new Realm(root, undefined, "root"), new Scope(label), label);
}

/**
 * A repository of services and an event bus.
 *
 * A context couples a *realm* (which services are visible and which listeners a dispatch reaches) with an
 * *ownership scope* (which effects die together). {@linkcode Context.fork} makes a child realm and scope (per-agent
 * contexts); {@linkcode Context.scope} makes only a child scope (what a plugin or a connection owns).
 *
 * Contract: every registration (`provide`, `on`, `effect`, `plugin`) is an effect owned by this context's scope
 * and torn down, newest first, when the scope is disposed. Registering on a disposed context throws
 * `ContextDisposed` before running anything; should the context start disposing while an effect's setup runs,
 * the teardown that setup returned runs at once and the registration throws `ContextDisposed`.
 */
export class Context implements AsyncDisposable {
  readonly #realm: Realm;
  readonly #scope: Scope;
  readonly #label: string;

  private constructor(realm: Realm, scope: Scope, label: string) {
    this.#realm = realm;
    this.#scope = scope;
    this.#label = label;
  }

  /** Kernel-internal construction and access. */
  static [INTERNAL](realm: Realm, scope: Scope, label: string): Context {
    return new Context(realm, scope, label);
  }

  /** Kernel-internal access to the realm and scope. */
  [INTERNAL](): ContextInternals {
    return { realm: this.#realm, scope: this.#scope };
  }

  /** The context mode. */
  get mode(): ContextMode {
    return this.#realm.root.mode;
  }

  /** The logger of this context tree. */
  get logger(): Logger {
    return this.#realm.root.logger;
  }

  /** The diagnostic label. */
  get label(): string {
    return this.#label;
  }

  /** True once this context's scope has started disposing. */
  get disposed(): boolean {
    return this.#scope.state !== "active";
  }

  /**
   * Runs `setup` now and registers the teardown it returns as an effect of this context.
   *
   * @returns the effect's idempotent, self-removing disposer
   * @throws {TerretError} `ContextDisposed` when this context is disposed (then `setup` does not run), or when it
   *   started disposing while `setup` ran (then the returned teardown has already run)
   */
  effect(setup: () => Teardown, label = "effect"): Disposer {
    this.#assertActive(label);
    return this.#scope.add(setup(), label);
  }

  /**
   * Provides `value` under `key`, visible to this context's realm and its descendants, as an effect.
   * Withdrawing it (dispose) first stops every plugin that was started with it.
   *
   * @throws {TerretError} `ServiceConflict` when the key is already provided at this level
   */
  provide<T>(key: ServiceKey<T>, value: T): Disposer {
    this.#assertActive(`provide ${key.key}`);
    const realm = this.#realm.providerRealm(key.key);
    const existing = realm.services.get(key.key);
    if (existing !== undefined) {
      throw new TerretError(
        "ServiceConflict",
        `Cannot provide service "${key.key}": it is already provided in this context`,
      );
    }
    const entry = { value, owner: this.#scope };
    realm.services.set(key.key, entry);
    realm.root.notifyServices();
    return this.#scope.add(async () => {
      if (realm.services.get(key.key) !== entry) return;
      realm.services.delete(key.key);
      await realm.root.withdrawn(key.key, value);
    }, `provide ${key.key}`);
  }

  /**
   * Resolves the service under `key`.
   *
   * @throws {TerretError} `ServiceMissing` when no visible plugin provides it
   */
  get<T>(key: ServiceKey<T>): T {
    const entry = this.#realm.lookup(key.key);
    if (entry === undefined) {
      throw new TerretError(
        "ServiceMissing",
        `Cannot resolve service "${key.key}": nothing provides it in context "${this.#label}"`,
      );
    }
    return entry.value as T;
  }

  /** Resolves the service under `key`, or `undefined` when none is visible. */
  maybe<T>(key: ServiceKey<T>): T | undefined {
    return this.#realm.lookup(key.key)?.value as T | undefined;
  }

  /** True when a service is visible under `key`. */
  has(key: ServiceKey<unknown> | string): boolean {
    return this.#realm.lookup(typeof key === "string" ? key : key.key) !== undefined;
  }

  /**
   * Registers a listener as an effect. A listener registered on a fork hears only dispatches made from that fork
   * or its descendants; one registered on the root hears every dispatch.
   */
  on<E extends EventDefinition>(
    def: E,
    listener: ListenerOf<E>,
    options: ListenOptions = {},
  ): Disposer {
    this.#assertActive(`on ${def?.name}`);
    return bus.addListener(
      this.#realm,
      def,
      listener as (...args: never[]) => unknown,
      this.#scope,
      options.prepend ?? false,
    );
  }

  /** Dispatches an `emit` event: listeners run in order; a throwing listener is reported, never rethrown. */
  emit<P>(def: EventDefinition<"emit", P, unknown>, payload: P): void {
    bus.emit(this.#realm, def as EventDefinition, payload);
  }

  /**
   * Dispatches a `waterfall` event around `inner`, which runs when the last listener calls `next` (or at once
   * when there are none). Returns what the chain returns.
   */
  waterfall<P, R>(
    def: EventDefinition<"waterfall", P, R>,
    payload: P,
    inner: (payload: P) => R,
  ): R {
    return bus.waterfall(
      this.#realm,
      def as EventDefinition,
      payload,
      inner as (payload: unknown) => unknown,
    ) as R;
  }

  /** Dispatches a `parallel` event; settles when every listener has, rejecting if any rejected. */
  parallel<P>(def: EventDefinition<"parallel", P, unknown>, payload: P): Promise<void> {
    return bus.parallel(this.#realm, def as EventDefinition, payload);
  }

  /** Dispatches a `serial` event; resolves to the first listener result other than `undefined`/`null`. */
  serial<P, R>(def: EventDefinition<"serial", P, R>, payload: P): Promise<R | undefined> {
    return bus.serial(this.#realm, def as EventDefinition, payload) as Promise<R | undefined>;
  }

  /**
   * Creates a child context with its own realm and scope: services provided on it shadow the parent's and stay
   * local, listeners registered on it hear only its subtree, and everything dies with it.
   */
  fork(label = "fork", options: ForkOptions = {}): Context {
    this.#assertActive(`fork ${label}`);
    const keys = (options.isolate ?? []).map((key) => typeof key === "string" ? key : key.key);
    const realm = new Realm(this.#realm.root, this.#realm, "fork", keys);
    return new Context(realm, new Scope(label, this.#scope), label);
  }

  /**
   * Creates a child context in which the listed keys are provided locally and not inherited: a subtree gets its
   * own instance of those services while sharing everything else (including events) with its parent.
   */
  isolate(keys: readonly (string | ServiceKey<unknown>)[], label = "isolate"): Context {
    this.#assertActive(`isolate ${label}`);
    const names = keys.map((key) => typeof key === "string" ? key : key.key);
    const realm = new Realm(this.#realm.root, this.#realm, "isolate", names);
    return new Context(realm, new Scope(label, this.#scope), label);
  }

  /** Creates a child ownership scope in the same realm: what it registers dies when it (or this) is disposed. */
  scope(label = "scope"): Context {
    this.#assertActive(`scope ${label}`);
    return new Context(this.#realm, new Scope(label, this.#scope), label);
  }

  /**
   * Mounts a plugin as an effect of this context. It parks until every injected service resolves, restarts when
   * one is replaced, and is unmounted when this context is disposed.
   *
   * @returns the plugin's {@linkcode Fiber}; `await fiber.settled()` waits for its start
   * @throws {TerretError} `ConfigInvalid` when `config` fails the plugin's schema (nothing is mounted)
   */
  plugin<C>(plugin: PluginLike<C>, config?: unknown, options: MountOptions = {}): Fiber {
    this.#assertActive(`mount plugin`);
    return new Fiber(this, plugin as PluginLike, config, options);
  }

  /** Resolves once no plugin anywhere in this context tree has a start, stop or reconfigure in flight. */
  idle(): Promise<void> {
    return PluginRuntime.of(this.#realm.root).idle();
  }

  /** Counts listeners registered at this context's level (for one event, or all). */
  listenerCount(def?: EventDefinition): number {
    return bus.countListeners(this.#realm, def);
  }

  /** The number of live effects this context's scope owns directly. */
  get effectCount(): number {
    return this.#scope.size;
  }

  /** The labels of the live effects this context owns directly, oldest first. */
  effectLabels(): string[] {
    return this.#scope.labels();
  }

  /** Disposes this context's scope: its effects newest first, waiting for each. Idempotent. */
  dispose(): Promise<void> {
    return this.#scope.dispose();
  }

  /** Same as {@linkcode Context.dispose}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  #assertActive(what: string): void {
    if (this.#scope.state !== "active") {
      throw new TerretError(
        "ContextDisposed",
        `Cannot ${what}: context "${this.#label}" is ${this.#scope.state}`,
      );
    }
  }
}
