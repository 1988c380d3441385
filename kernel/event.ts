/**
 * Event declarations: typed values naming an event, its dispatch mode and its payload contract.
 *
 * An event is declared once with {@linkcode defineEvent} and the resulting value is what producers dispatch and
 * listeners subscribe to. The value carries the payload type (from its zod schema), so dispatching needs no module
 * augmentation and no string names.
 *
 * @module
 */
import type { z } from "zod";

/**
 * How an event is dispatched; part of the event's public contract.
 *
 * - `emit`: fire-and-forget, listeners run in order; a throwing listener is isolated and reported, never thrown
 *   into the producer.
 * - `waterfall`: around-middleware; a listener gets `(payload, next)`, `next(p?)` delegates (optionally with a
 *   rewritten payload) and its return value propagates; returning without `next` short-circuits.
 * - `parallel`: awaited concurrent fan-out; the dispatch settles when every listener has, then rejects if any did.
 * - `serial`: awaited in order; the first listener returning a value other than `undefined`/`null` decides.
 */
export type DispatchMode = "emit" | "waterfall" | "parallel" | "serial";

/** The brand marking a value made by {@linkcode defineEvent}; shared across copies of the kernel. */
export const EVENT_BRAND: unique symbol = Symbol.for("terret.hames.event") as never;

/** Options accepted by {@linkcode defineEvent}. */
export interface EventOptions<M extends DispatchMode, P, R> {
  /** The dispatch mode; dispatching in another mode is a contract violation. */
  readonly mode: M;
  /** One sentence for the events catalog: who dispatches it, when, and what listeners may do. */
  readonly description: string;
  /** The payload contract; validated at dispatch when the context validates payloads. */
  readonly payload: z.ZodType<P>;
  /** For `waterfall` and `serial` events, the result contract (documentation and typing only). */
  readonly result?: z.ZodType<R>;
  /** True for durable session event types (stored in the session log). */
  readonly durable?: boolean;
  /** The package declaring the event, for the catalog (e.g. `"@terret/core"`). */
  readonly owner?: string;
}

/**
 * A declared event: its name, dispatch mode and payload contract.
 *
 * Made only by {@linkcode defineEvent}. The type parameters carry the mode `M`, the payload `P` and, for
 * `waterfall`/`serial` events, the result `R`.
 */
export interface EventDefinition<M extends DispatchMode = DispatchMode, P = unknown, R = unknown> {
  /** Brand proving the value was declared through {@linkcode defineEvent}. */
  readonly [EVENT_BRAND]: true;
  /** The event name, e.g. `"tools/pre_execute"`; unique within an application. */
  readonly name: string;
  /** The dispatch mode. */
  readonly mode: M;
  /** Catalog description. */
  readonly description: string;
  /** Payload schema. */
  readonly payload: z.ZodType<P>;
  /** Result schema, when declared. */
  readonly result: z.ZodType<R> | undefined;
  /** Whether this is a durable session event type. */
  readonly durable: boolean;
  /** The declaring package, when given. */
  readonly owner: string | undefined;
  /** Phantom field carrying the result type; never set at run time. */
  readonly __result?: R;
}

/**
 * Declares an event.
 *
 * @param name the event name, `domain/verb` style (`"tools/pre_execute"`)
 * @param options mode, description, payload schema and optional result schema
 * @returns a frozen {@linkcode EventDefinition}
 * @throws {TypeError} when the name is empty or the mode unknown
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createContext, defineEvent } from "@terret/hames";
 *
 * const Greeted = defineEvent("demo/greeted", {
 *   mode: "emit",
 *   description: "Emitted after a greeting is printed",
 *   payload: z.object({ name: z.string() }),
 * });
 * const ctx = createContext();
 * ctx.on(Greeted, ({ name }) => console.log(`hello ${name}`));
 * ctx.emit(Greeted, { name: "world" });
 * ```
 */
export function defineEvent<M extends DispatchMode, P, R = void>(
  name: string,
  options: EventOptions<M, P, R>,
): EventDefinition<M, P, R> {
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError("Cannot define event: the name must be a non-empty string");
  }
  if (!MODES.includes(options.mode)) {
    throw new TypeError(`Cannot define event "${name}": unknown mode "${String(options.mode)}"`);
  }
  return Object.freeze({
    [EVENT_BRAND]: true as const,
    name,
    mode: options.mode,
    description: options.description,
    payload: options.payload,
    result: options.result,
    durable: options.durable ?? false,
    owner: options.owner,
  });
}

const MODES: readonly DispatchMode[] = ["emit", "waterfall", "parallel", "serial"];

/** Returns true when `value` was made by {@linkcode defineEvent}. */
export function isEventDefinition(value: unknown): value is EventDefinition {
  return typeof value === "object" && value !== null &&
    (value as Record<symbol, unknown>)[EVENT_BRAND] === true;
}

/** An `emit` event carrying payload `P`. */
export type EmitEvent<P> = EventDefinition<"emit", P, void>;
/** A `waterfall` event carrying payload `P` whose chain returns `R` (possibly a promise). */
export type WaterfallEvent<P, R> = EventDefinition<"waterfall", P, R>;
/** A `parallel` event carrying payload `P`. */
export type ParallelEvent<P> = EventDefinition<"parallel", P, void>;
/** A `serial` event carrying payload `P` whose first decisive listener returns `R`. */
export type SerialEvent<P, R> = EventDefinition<"serial", P, R>;

/** The continuation a waterfall listener calls to delegate; `next()` keeps the payload, `next(p)` rewrites it. */
export type WaterfallNext<P, R> = (payload?: P) => R;

/** A listener for an `emit` event; its return value is ignored, except that a rejected promise is reported. */
export type EmitListener<P> = (payload: P) => unknown;
/** A listener for a `waterfall` event. Call `next` at most once; not calling it short-circuits. */
export type WaterfallListener<P, R> = (payload: P, next: WaterfallNext<P, R>) => R;
/** A listener for a `parallel` event. */
export type ParallelListener<P> = (payload: P) => unknown;
/** A listener for a `serial` event; return `undefined` to pass, anything else to decide. */
export type SerialListener<P, R> = (
  payload: P,
) => R | undefined | void | Promise<R | undefined | void>;

/** The listener type matching an event definition's mode. */
export type ListenerOf<E> = E extends EventDefinition<"emit", infer P, unknown> ? EmitListener<P>
  : E extends EventDefinition<"waterfall", infer P, infer R> ? WaterfallListener<P, R>
  : E extends EventDefinition<"parallel", infer P, unknown> ? ParallelListener<P>
  : E extends EventDefinition<"serial", infer P, infer R> ? SerialListener<P, R>
  : never;
