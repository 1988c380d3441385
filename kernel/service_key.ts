/**
 * Typed service keys: the stable names services claim on a context.
 *
 * @module
 */

/**
 * A typed, stable key under which one service is provided on a context (`"tools"`, `"sessions"`, …).
 *
 * Consumers resolve a capability by key, never by importing a concrete class. The type parameter carries the
 * service's interface so `ctx.get(Tools)` is typed without module augmentation.
 */
export interface ServiceKey<T> {
  /** The stable key string, e.g. `"tools"`. */
  readonly key: string;
  /** One line saying what the service provides (rendered in catalogs). */
  readonly description: string;
  /** Phantom field carrying the service type; never set at run time. */
  readonly __service?: T;
}

/**
 * Declares a typed service key.
 *
 * @param key the stable key string, unique within an application
 * @param description one line saying what the service provides
 * @returns a frozen {@linkcode ServiceKey}
 *
 * @example
 * ```ts
 * import { defineService } from "@terret/hames";
 * interface Clock { now(): number }
 * const ClockKey = defineService<Clock>("clock", "Wall-clock time in milliseconds");
 * console.log(ClockKey.key); // "clock"
 * ```
 */
export function defineService<T>(key: string, description = ""): ServiceKey<T> {
  if (typeof key !== "string" || key.length === 0) {
    throw new TypeError("Cannot define service: the key must be a non-empty string");
  }
  return Object.freeze({ key, description }) as ServiceKey<T>;
}
