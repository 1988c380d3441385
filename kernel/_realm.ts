/**
 * Realms: the visibility levels behind contexts (services and listener scopes), and the state shared by a whole
 * context tree. Internal to the kernel.
 *
 * @module
 */
import type { EventDefinition } from "./event.ts";
import type { Logger } from "./logger.ts";
import type { Scope } from "./_scope.ts";

/** The context mode: contract violations throw in `development`/`test` and are logged in `production`. */
export type ContextMode = "development" | "test" | "production";

/** One registered listener. */
export interface ListenerEntry {
  readonly fn: (...args: never[]) => unknown;
  readonly owner: Scope;
  readonly label: string;
}

/** Per-realm, per-event listener storage. Lists are copy-on-write so dispatch iterates without copying. */
export interface ListenerSlot {
  own: readonly ListenerEntry[];
  merged: readonly ListenerEntry[];
  /** The parent's merged listeners `merged` was built from (kept while neither it nor `own` changes). */
  mergedParent: readonly ListenerEntry[] | undefined;
  /** The own listeners `merged` was built from. */
  mergedOwn: readonly ListenerEntry[];
  version: number;
}

/** A provided service instance and the scope that provided it. */
export interface ServiceEntry {
  readonly value: unknown;
  readonly owner: Scope;
}

/** Something notified whenever services change anywhere in the tree (the plugin runtime). */
export interface ServiceWatcher {
  /** A service appeared or disappeared; re-evaluate parked and running plugins. */
  servicesChanged(): void;
  /** `value` under `key` was withdrawn; resolves once everything started with it has stopped. */
  withdrawn(key: string, value: unknown): Promise<void>;
}

/** State shared by every context of one tree. */
export class RootState {
  readonly mode: ContextMode;
  readonly logger: Logger;
  readonly validatePayloads: boolean;
  /** Bumped on every listener registration change; invalidates merged listener lists. */
  listenerVersion: number = 0;
  /** First definition seen per event name, to refuse two different declarations of one name. */
  readonly declared: Map<string, EventDefinition> = new Map();
  readonly watchers: Set<ServiceWatcher> = new Set();
  /** The plugin runtime of this tree, created by the first mount. */
  runtime: ServiceWatcher | undefined;

  constructor(mode: ContextMode, logger: Logger, validatePayloads: boolean) {
    this.mode = mode;
    this.logger = logger;
    this.validatePayloads = validatePayloads;
  }

  /** Tells every watcher that services changed. */
  notifyServices(): void {
    for (const watcher of [...this.watchers]) watcher.servicesChanged();
  }

  /** Tells every watcher a service was withdrawn and waits until its dependents have stopped. */
  async withdrawn(key: string, value: unknown): Promise<void> {
    await Promise.all([...this.watchers].map((watcher) => watcher.withdrawn(key, value)));
  }
}

/**
 * A visibility level. A fork realm keeps every service provided on it local (shadowing ancestors) and scopes its
 * listeners to dispatches from its subtree. An isolate realm keeps only the listed keys local, and neither inherits
 * those keys from ancestors; its listeners belong to the nearest fork (or root) realm.
 */
export class Realm {
  readonly root: RootState;
  readonly parent: Realm | undefined;
  readonly kind: "root" | "fork" | "isolate";
  readonly isolated: ReadonlySet<string>;
  /** The realm whose listener tables this realm's registrations and dispatches use. */
  readonly eventRealm: Realm;
  readonly services: Map<string, ServiceEntry> = new Map();
  readonly slots: Map<EventDefinition, ListenerSlot> = new Map();

  constructor(
    root: RootState,
    parent: Realm | undefined,
    kind: "root" | "fork" | "isolate",
    isolated: Iterable<string> = [],
  ) {
    this.root = root;
    this.parent = parent;
    this.kind = kind;
    this.isolated = new Set(isolated);
    this.eventRealm = kind === "isolate" && parent !== undefined ? parent.eventRealm : this;
  }

  /** The realm a service under `key` provided from here lands in. */
  providerRealm(key: string): Realm {
    if (this.kind !== "isolate" || this.isolated.has(key) || this.parent === undefined) return this;
    return this.parent.providerRealm(key);
  }

  /** Resolves `key` walking up, stopping at a realm that isolates it. */
  lookup(key: string): ServiceEntry | undefined {
    const entry = this.services.get(key);
    if (entry !== undefined) return entry;
    if (this.isolated.has(key) || this.parent === undefined) return undefined;
    return this.parent.lookup(key);
  }
}
