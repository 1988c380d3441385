/**
 * Plugins: the functional form ({@linkcode definePlugin}) and the class form ({@linkcode Service}).
 *
 * @module
 */
import type { z } from "zod";
import type { Context } from "./context.ts";
import type { HostPermissions, PermissionDeps } from "./permissions.ts";
import type { ServiceKey } from "./service_key.ts";

/**
 * A functional plugin: `apply(ctx, config)` wires registrations on `ctx`, every one of them an effect that dies
 * with the plugin.
 *
 * Contract: `apply` runs only once every `inject` key resolves, and again (after a full teardown) when one of
 * those services is replaced; it must not keep references past its effects. A throwing `apply` marks the plugin
 * failed after its partial effects are disposed.
 */
export interface Plugin<C = unknown> {
  /** A stable plugin name (`"terret-tools-std"`); rows and catalogs refer to it. */
  readonly name: string;
  /** One line for the config catalog. */
  readonly description?: string;
  /**
   * Services that must exist before `apply` runs; the plugin parks until they do. A function derives them from the
   * parsed config (e.g. only a config that spawns programs needs `subprocess`); it is called again whenever the
   * config is replaced, and must be pure like a `permissions` hook. (Typed method-style so a `Plugin<C>` stays
   * assignable to `PluginLike`.)
   */
  readonly inject?:
    | readonly ServiceKey<unknown>[]
    | { derive(config: C): readonly ServiceKey<unknown>[] }["derive"];
  /** Services `apply` provides, declared so boot can explain cycles and missing providers. */
  readonly provides?: readonly ServiceKey<unknown>[];
  /** The config schema; the parsed output (defaults applied) is what `apply` receives. */
  readonly config?: z.ZodType<C>;
  /** The host permissions this plugin needs for a config (contract: `PermissionsHook`); none when absent. */
  permissions?(config: C, deps: PermissionDeps): HostPermissions;
  /** Wires the plugin into `ctx`. */
  apply(ctx: Context, config: C): void | Promise<void>;
}

/**
 * Declares a functional plugin (an identity function that fixes the types).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createContext, definePlugin, defineService } from "@terret/hames";
 *
 * const Greeter = defineService<{ greet(name: string): string }>("greeter");
 * const greeter = definePlugin({
 *   name: "greeter",
 *   provides: [Greeter],
 *   config: z.object({ greeting: z.string().default("hello") }),
 *   apply(ctx, config) {
 *     ctx.provide(Greeter, { greet: (name) => `${config.greeting} ${name}` });
 *   },
 * });
 * await using ctx = createContext();
 * await ctx.plugin(greeter, {}).settled();
 * console.log(ctx.get(Greeter).greet("world")); // "hello world"
 * ```
 */
export function definePlugin<C>(plugin: Plugin<C>): Plugin<C> {
  if (typeof plugin?.name !== "string" || typeof plugin.apply !== "function") {
    throw new TypeError("Cannot define plugin: it needs a string `name` and an `apply` function");
  }
  return plugin;
}

/**
 * The class form of a plugin: a long-lived service with a lifecycle, claiming a key.
 *
 * Subclasses declare `static key`, optionally `static inject` and `static config`, and override `start`, `stop`
 * and `reconfigure`. Mounting constructs the instance with the plugin's context and parsed config, awaits
 * `start()`, then provides it under `key`; teardown withdraws it (stopping dependents first) and then awaits
 * `stop()`.
 *
 * Contract: `reconfigure(config)` receives the new config while `this.config` still holds the old one; it must
 * either apply the whole change or throw, and a throw rolls back (the effects it registered are disposed and the
 * old config stays). Without a `reconfigure` override the plugin is restarted with the new config.
 */
export abstract class Service<C = unknown> {
  /** The plugin's context: registrations made through it die with the service. */
  readonly ctx: Context;
  /** The current, validated config. */
  config: C;

  /** Called by the kernel when mounting; do not construct services directly. */
  constructor(ctx: Context, config: C) {
    this.ctx = ctx;
    this.config = config;
  }

  /** Starts the service; it is provided under its key only after this resolves. */
  start(): void | Promise<void> {}

  /** Stops the service after it has been withdrawn and its dependents stopped. */
  stop(): void | Promise<void> {}

  /** Applies a new config in place (see the class contract); leave undefined to be restarted instead. */
  reconfigure?(config: C): void | Promise<void>;
}

/** The static side of a {@linkcode Service} subclass. */
export interface ServiceClass<C = unknown> {
  /** Constructs the instance (called by the kernel). */
  new (ctx: Context, config: C): Service<C>;
  /** The class name, used as the plugin name unless `pluginName` is set. */
  readonly name: string;
  /** The plugin name, when it differs from the class name. */
  readonly pluginName?: string;
  /** One line for the config catalog. */
  readonly description?: string;
  /** The key the instance is provided under (none: the service is mounted but not provided). */
  readonly key?: ServiceKey<unknown>;
  /** Services that must exist before the instance is constructed. */
  readonly inject?: readonly ServiceKey<unknown>[];
  /** The config schema. */
  readonly config?: z.ZodType<C>;
  /** The host permissions the service needs for a config (contract: `PermissionsHook`); none when absent. */
  permissions?(config: C, deps: PermissionDeps): HostPermissions;
}

/** Anything `ctx.plugin()` and the loader accept. */
export type PluginLike<C = unknown> = Plugin<C> | ServiceClass<C>;

/** True when `value` is a {@linkcode Service} subclass. */
export function isServiceClass(value: unknown): value is ServiceClass {
  return typeof value === "function" && value.prototype instanceof Service;
}

/** The name a plugin is known by. */
export function pluginName(plugin: PluginLike): string {
  if (isServiceClass(plugin)) return plugin.pluginName ?? plugin.name;
  return plugin.name;
}

/** The keys a plugin declares it provides. */
export function pluginProvides(plugin: PluginLike): readonly ServiceKey<unknown>[] {
  if (isServiceClass(plugin)) return plugin.key === undefined ? [] : [plugin.key];
  return plugin.provides ?? [];
}
