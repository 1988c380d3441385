/**
 * A collection whose entries are registered as effects of owner contexts and seen along the context tree: the
 * mechanism behind registries whose entries belong to a context and its subtree (the tool registry, the prompt's
 * sections).
 *
 * @module
 */
import { z } from "zod";
import type { Context } from "./context.ts";
import type { Disposer } from "./disposer.ts";
import { defineEvent, type EventDefinition } from "./event.ts";
import { listenersFor } from "./_bus.ts";
import { INTERNAL } from "./_internal.ts";
import type { ListenerEntry } from "./_realm.ts";

/** What one collection's dispatch carries: each entry's listener adds its entry when the token is its own. */
interface Collector {
  readonly token: object;
  add(entry: unknown): void;
}

const Collect: EventDefinition<"emit", Collector, void> = defineEvent("hames/collect", {
  mode: "emit",
  owner: "@terret/hames",
  description:
    "Internal to ScopedCollection: gathers the entries visible from the dispatching context (each entry listens " +
    "on its owner's context); add entries through a collection, never listen to it.",
  payload: z.custom<Collector>((value) => typeof value === "object" && value !== null),
});

/**
 * Entries registered as effects of owner contexts. An entry is visible from its owner and the owner's
 * descendants (a fork's entries are invisible to its parent and siblings) and dies with its owner. A view of the
 * entries visible from a context is derived once and cached until any entry of the collection is added or removed.
 *
 * Contract: `derive` receives the visible entries ancestors' first, each level in registration order, so a
 * nearer entry comes after a farther one; it must be pure and must not throw (a throw propagates out of `view`
 * and nothing is cached). The view it returns is shared by every caller until the next change, so it should be
 * immutable. `add` throws what `owner.effect` throws (`ContextDisposed` on a disposed owner).
 *
 * @example
 * ```ts
 * import { createContext, ScopedCollection } from "@terret/hames";
 *
 * await using root = createContext();
 * const names = new ScopedCollection<string, readonly string[]>((entries) => Object.freeze([...entries]));
 * names.add(root, "shared", "name shared");
 * const child = root.fork("agent");
 * names.add(child, "own", "name own");
 * console.log(names.view(root)); // ["shared"]
 * console.log(names.view(child)); // ["shared", "own"]
 * ```
 */
export class ScopedCollection<T, V> {
  readonly #token = Object.freeze({});
  readonly #derive: (entries: readonly T[]) => V;
  readonly #views = new WeakMap<Context, { readonly version: number; readonly value: V }>();
  /**
   * Views by the listener array a `Collect` dispatch reaches: a context with no entries of its own (a fresh agent's
   * fork) reaches its parent's array, so its first view is its parent's instead of a dispatch and a derive.
   */
  readonly #byListeners = new WeakMap<
    readonly ListenerEntry[],
    { readonly version: number; readonly value: V }
  >();
  #version = 0;

  /** @param derive builds the view of the entries visible from a context */
  constructor(derive: (entries: readonly T[]) => V) {
    this.#derive = derive;
  }

  /**
   * Adds `entry` for as long as `owner` lives (or until the returned disposer runs).
   *
   * @param label names the effect in diagnostics
   */
  add(owner: Context, entry: T, label: string): Disposer {
    const token = this.#token;
    return owner.effect(() => {
      const off = owner.on(Collect, (collector) => {
        if (collector.token === token) collector.add(entry);
      });
      this.#version++;
      return async () => {
        await off();
        this.#version++;
      };
    }, label);
  }

  /** The view of the entries visible from `ctx`, derived on first use after a change and cached until the next. */
  view(ctx: Context): V {
    const cached = this.#views.get(ctx);
    if (cached !== undefined && cached.version === this.#version) return cached.value;
    const version = this.#version;
    const listeners = listenersFor(ctx[INTERNAL]().realm, Collect as EventDefinition);
    const shared = this.#byListeners.get(listeners);
    if (shared !== undefined && shared.version === version) {
      this.#views.set(ctx, shared);
      return shared.value;
    }
    const entries: T[] = [];
    ctx.emit(Collect, { token: this.#token, add: (entry) => entries.push(entry as T) });
    const view = { version, value: this.#derive(entries) };
    this.#views.set(ctx, view);
    this.#byListeners.set(listeners, view);
    return view.value;
  }
}
