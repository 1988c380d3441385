/**
 * The event bus: listener storage per realm and the four dispatch modes. Internal to the kernel.
 *
 * @module
 */
import type { DispatchMode, EventDefinition } from "./event.ts";
import { isEventDefinition } from "./event.ts";
import type { Disposer } from "./disposer.ts";
import { TerretError } from "./hames_errors.ts";
import { ListenerFailed } from "./events.ts";
import type { ListenerEntry, ListenerSlot, Realm } from "./_realm.ts";
import type { Scope } from "./_scope.ts";

const EMPTY: readonly ListenerEntry[] = Object.freeze([]);

/** Registers a listener in `realm`'s event realm, owned by `owner`. */
export function addListener(
  realm: Realm,
  def: EventDefinition,
  fn: ListenerEntry["fn"],
  owner: Scope,
  prepend: boolean,
): Disposer {
  if (!isEventDefinition(def)) {
    throw violation(realm, `Cannot listen to an undeclared event: declare it with defineEvent()`);
  }
  if (typeof fn !== "function") {
    throw new TypeError(`Cannot listen to "${def.name}": the listener must be a function`);
  }
  const level = realm.eventRealm;
  const slot = slotFor(level, def);
  const entry: ListenerEntry = { fn, owner, label: `on ${def.name}` };
  slot.own = prepend ? [entry, ...slot.own] : [...slot.own, entry];
  level.root.listenerVersion++;
  return owner.add(() => {
    slot.own = slot.own.filter((candidate) => candidate !== entry);
    level.root.listenerVersion++;
  }, entry.label);
}

/** Counts listeners registered directly in `realm`'s event realm (all events, or one). */
export function countListeners(realm: Realm, def?: EventDefinition): number {
  const level = realm.eventRealm;
  if (def !== undefined) return level.slots.get(def)?.own.length ?? 0;
  let total = 0;
  for (const slot of level.slots.values()) total += slot.own.length;
  return total;
}

function slotFor(level: Realm, def: EventDefinition): ListenerSlot {
  let slot = level.slots.get(def);
  if (slot === undefined) {
    const seen = level.root.declared.get(def.name);
    if (seen === undefined) level.root.declared.set(def.name, def);
    else if (seen !== def) {
      throw violation(
        level,
        `Cannot use event "${def.name}": it was declared twice with different definitions`,
      );
    }
    slot = { own: EMPTY, merged: EMPTY, mergedParent: undefined, mergedOwn: EMPTY, version: -1 };
    level.slots.set(def, slot);
  }
  return slot;
}

/**
 * The listeners a dispatch of `def` from `realm` reaches: ancestors' first, then the realm's own. The array is never
 * mutated, and a realm with no listeners of its own for `def` shares its parent's, so two dispatches reaching the
 * same array reach the same listeners.
 */
export function listenersFor(realm: Realm, def: EventDefinition): readonly ListenerEntry[] {
  const level = realm.eventRealm;
  const slot = slotFor(level, def);
  const version = level.root.listenerVersion;
  if (slot.version !== version) {
    const parent = level.parent === undefined ? undefined : listenersFor(level.parent, def);
    // The same listeners keep the same array, so a change elsewhere in the tree does not copy them again.
    if (parent !== slot.mergedParent || slot.own !== slot.mergedOwn) {
      slot.merged = parent === undefined || parent.length === 0
        ? slot.own
        : slot.own.length === 0
        ? parent
        : [...parent, ...slot.own];
      slot.mergedParent = parent;
      slot.mergedOwn = slot.own;
    }
    slot.version = version;
  }
  return slot.merged;
}

/**
 * Checks a dispatch against the event's contract. Returns the listeners to run, or `undefined` when a violation
 * was logged (production) and the dispatch must be skipped; throws in development and test.
 */
export function prepare(
  realm: Realm,
  def: EventDefinition,
  mode: DispatchMode,
  payload: unknown,
): readonly ListenerEntry[] | undefined {
  if (!isEventDefinition(def)) {
    return refuse(
      realm,
      `Cannot dispatch an undeclared event in mode "${mode}": declare it with defineEvent()`,
    );
  }
  if (def.mode !== mode) {
    return refuse(realm, `Cannot ${mode} "${def.name}": it is declared as a ${def.mode} event`);
  }
  if (realm.root.validatePayloads && !checkPayload(realm, def, payload)) return undefined;
  return listenersFor(realm, def);
}

/** Validates a payload against the event's schema; false (after logging) when production should skip. */
function checkPayload(realm: Realm, def: EventDefinition, payload: unknown): boolean {
  const result = def.payload.safeParse(payload);
  if (result.success) return true;
  const detail = result.error.issues
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
  refuse(realm, `Cannot dispatch "${def.name}": the payload breaks its contract: ${detail}`);
  return false;
}

function refuse(realm: Realm, message: string): undefined {
  if (realm.root.mode === "production") {
    realm.root.logger.log("error", message, { code: "ContractViolation" });
    return undefined;
  }
  throw violation(realm, message);
}

function violation(realm: Realm, message: string): TerretError {
  void realm;
  return new TerretError("ContractViolation", message);
}

/** Runs `emit` listeners in order, isolating failures. */
export function emit(realm: Realm, def: EventDefinition, payload: unknown): void {
  const listeners = prepare(realm, def, "emit", payload);
  if (listeners === undefined) return;
  for (let i = 0; i < listeners.length; i++) {
    const entry = listeners[i]!;
    try {
      const result = (entry.fn as (p: unknown) => unknown)(payload);
      if (result instanceof Promise) {
        result.catch((error) => reportFailure(realm, def, entry, error));
      }
    } catch (error) {
      reportFailure(realm, def, entry, error);
    }
  }
}

function reportFailure(
  realm: Realm,
  def: EventDefinition,
  entry: ListenerEntry,
  error: unknown,
): void {
  realm.root.logger.log("error", `Listener of "${def.name}" failed`, { label: entry.label, error });
  if (def === ListenerFailed) return;
  emit(realm, ListenerFailed, { event: def.name, label: entry.label, error });
}

type WaterfallFn = (payload: unknown, next: (payload?: unknown) => unknown) => unknown;

/** Runs a waterfall chain ending in `inner`. */
export function waterfall(
  realm: Realm,
  def: EventDefinition,
  payload: unknown,
  inner: (payload: unknown) => unknown,
): unknown {
  const listeners = prepare(realm, def, "waterfall", payload);
  if (listeners === undefined) return inner(payload);
  if (listeners.length === 0) return inner(payload);
  return step(realm, def, listeners, 0, payload, inner);
}

function step(
  realm: Realm,
  def: EventDefinition,
  listeners: readonly ListenerEntry[],
  index: number,
  payload: unknown,
  inner: (payload: unknown) => unknown,
): unknown {
  if (index === listeners.length) return inner(payload);
  let called = false;
  return (listeners[index]!.fn as WaterfallFn)(payload, (rewritten?: unknown) => {
    if (called) {
      throw new TypeError(`Cannot call next() twice in one listener of waterfall "${def.name}"`);
    }
    called = true;
    const next = rewritten === undefined ? payload : rewritten;
    if (next !== payload && realm.root.validatePayloads && !checkPayload(realm, def, next)) {
      return step(realm, def, listeners, index + 1, payload, inner);
    }
    return step(realm, def, listeners, index + 1, next, inner);
  });
}

/** Runs `parallel` listeners concurrently; rejects after all settle if any failed. */
export async function parallel(
  realm: Realm,
  def: EventDefinition,
  payload: unknown,
): Promise<void> {
  const listeners = prepare(realm, def, "parallel", payload);
  if (listeners === undefined || listeners.length === 0) return;
  const results = await Promise.allSettled(
    listeners.map(async (entry) => await (entry.fn as (p: unknown) => unknown)(payload)),
  );
  const errors = results.flatMap((result) => result.status === "rejected" ? [result.reason] : []);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    throw new AggregateError(errors, `${errors.length} listeners of "${def.name}" failed`);
  }
}

/** Runs `serial` listeners in order until one returns a value other than `undefined`/`null`. */
export async function serial(
  realm: Realm,
  def: EventDefinition,
  payload: unknown,
): Promise<unknown> {
  const listeners = prepare(realm, def, "serial", payload);
  if (listeners === undefined) return undefined;
  for (const entry of listeners) {
    const result = await (entry.fn as (p: unknown) => unknown)(payload);
    if (result !== undefined && result !== null) return result;
  }
  return undefined;
}
