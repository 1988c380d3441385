/**
 * Hames, Terret's plugin kernel: contexts holding services by key, an event bus with four dispatch modes,
 * reversible effects, plugins that park until their dependencies exist, forks, and a config-row loader.
 *
 * The kernel knows nothing about LLMs; it depends on `zod` only.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createContext, defineEvent, definePlugin, defineService } from "@terret/hames";
 *
 * const Counted = defineEvent("demo/counted", {
 *   mode: "waterfall",
 *   description: "Asks listeners to adjust a count",
 *   payload: z.number(),
 *   result: z.number(),
 * });
 * const Counter = defineService<{ count(n: number): number }>("counter");
 *
 * const counter = definePlugin({
 *   name: "counter",
 *   provides: [Counter],
 *   apply(ctx) {
 *     ctx.provide(Counter, { count: (n) => ctx.waterfall(Counted, n, (m) => m) });
 *   },
 * });
 * const doubler = definePlugin({
 *   name: "doubler",
 *   inject: [Counter],
 *   apply(ctx) {
 *     ctx.on(Counted, (n, next) => next(n * 2));
 *   },
 * });
 *
 * await using ctx = createContext();
 * ctx.plugin(doubler); // parks until "counter" exists
 * ctx.plugin(counter);
 * await ctx.idle();
 * console.log(ctx.get(Counter).count(21)); // 42
 * ```
 *
 * @module
 */
export {
  isTerretError,
  TerretError,
  type TerretErrorConstructor,
  type TerretErrorOptions,
} from "./errors.ts";
export {
  defineErrorCodes,
  type ErrorCodeOf,
  type ErrorCodes,
  isErrorCodes,
  knownCodes,
} from "./error_codes.ts";
export { HAMES_ERROR_CODES, HAMES_ERRORS, type HamesErrorCode } from "./hames_errors.ts";
export { ScopedCollection } from "./scoped_collection.ts";
export { defineService, type ServiceKey } from "./service_key.ts";
export {
  defineEvent,
  type DispatchMode,
  type EmitEvent,
  type EmitListener,
  EVENT_BRAND,
  type EventDefinition,
  type EventOptions,
  isEventDefinition,
  type ListenerOf,
  type ParallelEvent,
  type ParallelListener,
  type SerialEvent,
  type SerialListener,
  type WaterfallEvent,
  type WaterfallListener,
  type WaterfallNext,
} from "./event.ts";
export type { Disposer, Teardown } from "./disposer.ts";
export {
  Context,
  type ContextMode,
  createContext,
  type CreateContextOptions,
  type ForkOptions,
  type ListenOptions,
} from "./context.ts";
export {
  definePlugin,
  isServiceClass,
  type Plugin,
  type PluginLike,
  pluginName,
  pluginProvides,
  Service,
  type ServiceClass,
} from "./plugin.ts";
export { Fiber, type FiberState, type MountOptions, PluginRuntime } from "./fiber.ts";
export { Loader, LoaderKey, type Row, rowPluginName } from "./loader.ts";
export { type ConfigIssue, configSchema, parseConfig } from "./config.ts";
export {
  type HostPermissions,
  NO_PERMISSION_DEPS,
  PERMISSION_KINDS,
  type PermissionDeps,
  type PermissionsHook,
  pluginPermissions,
  type ProvidingRow,
} from "./permissions.ts";
export {
  ConfigUpdated,
  type ConfigUpdatedPayload,
  KERNEL_EVENTS,
  ListenerFailed,
  type ListenerFailedPayload,
  PluginFailed,
  type PluginFailedPayload,
} from "./events.ts";
export { renderConfigCatalog, renderErrorCatalog, renderEventCatalog } from "./catalog.ts";
export {
  EVENT_LOOP_SLICE_MS,
  EventLoopTurns,
  type EventLoopTurnsOptions,
} from "./event_loop_turns.ts";
export {
  createMemoryLogger,
  createStderrLogger,
  type Logger,
  type LogLevel,
  type MemoryLogger,
} from "./logger.ts";
