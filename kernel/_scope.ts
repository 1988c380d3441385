/**
 * Ownership scopes: the effect lists behind contexts and plugin fibers. Internal to the kernel.
 *
 * @module
 */
import type { Disposer, Teardown } from "./disposer.ts";
import { TerretError } from "./hames_errors.ts";

/** A record of one registered effect. */
interface EffectRecord {
  readonly label: string;
  readonly disposer: Disposer;
}

/** The lifecycle state of a scope. */
export type ScopeState = "active" | "disposing" | "disposed";

/**
 * An ownership scope: effects registered in it are torn down, newest first, when it is disposed. A child scope is
 * itself an effect of its parent, so disposal cascades.
 */
export class Scope {
  readonly label: string;
  #effects = new Set<EffectRecord>();
  #state: ScopeState = "active";
  #disposing: Promise<void> | undefined;
  #detach: (() => void) | undefined;

  constructor(label: string, parent?: Scope) {
    this.label = label;
    if (parent !== undefined) {
      const record = parent.#record(() => this.dispose(), `scope ${label}`);
      this.#detach = () => parent.#effects.delete(record);
    }
  }

  /** The current lifecycle state. */
  get state(): ScopeState {
    return this.#state;
  }

  /** The number of live effects owned directly by this scope. */
  get size(): number {
    return this.#effects.size;
  }

  /** The labels of live effects, oldest first. */
  labels(): string[] {
    return [...this.#effects].map((record) => record.label);
  }

  /**
   * Registers a teardown, returning its disposer. When the scope is no longer active the teardown runs at once
   * and `ContextDisposed` is thrown, so a late registration never leaks.
   */
  add(teardown: Teardown, label: string): Disposer {
    return this.#record(teardown, label).disposer;
  }

  #record(teardown: Teardown, label: string): EffectRecord {
    const disposer = createDisposer(teardown, label, () => this.#effects.delete(record));
    const record: EffectRecord = { label, disposer };
    if (this.#state !== "active") {
      const done = disposer();
      done.catch(() => {});
      throw new TerretError(
        "ContextDisposed",
        `Cannot register effect "${label}": scope "${this.label}" is ${this.#state}`,
      );
    }
    this.#effects.add(record);
    return record;
  }

  /** Remembers which effects exist now, so {@linkcode Scope.rollback} can undo what is added later. */
  mark(): ReadonlySet<unknown> {
    return new Set(this.#effects);
  }

  /** Disposes, newest first, every effect added since `mark`; failures are rethrown as in `dispose`. */
  async rollback(mark: ReadonlySet<unknown>): Promise<void> {
    const added = [...this.#effects].filter((record) => !mark.has(record)).reverse();
    const errors: unknown[] = [];
    for (const record of added) {
      try {
        await record.disposer();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      throw new AggregateError(errors, `Rolling back scope "${this.label}" failed`);
    }
  }

  /**
   * Disposes every effect newest first, waiting for each. Every teardown runs even when one fails; failures are
   * rethrown afterwards (the error itself when one, an `AggregateError` when several).
   */
  dispose(): Promise<void> {
    this.#disposing ??= this.#disposeAll();
    return this.#disposing;
  }

  async #disposeAll(): Promise<void> {
    this.#state = "disposing";
    const errors: unknown[] = [];
    // No effect can be added while disposing, so one newest-first snapshot covers them all.
    const records = [...this.#effects].reverse();
    for (const record of records) {
      try {
        await record.disposer();
      } catch (error) {
        errors.push(error);
      }
    }
    this.#state = "disposed";
    this.#detach?.();
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      throw new AggregateError(
        errors,
        `Disposing scope "${this.label}" failed ${errors.length} times`,
      );
    }
  }
}

/** Builds an idempotent, self-removing disposer around a teardown. */
function createDisposer(teardown: Teardown, label: string, forget: () => void): Disposer {
  let done: Promise<void> | undefined;
  const run = (): Promise<void> => {
    if (done !== undefined) return done;
    forget();
    try {
      const result = typeof teardown === "function" ? teardown() : undefined;
      done = result instanceof Promise ? result : Promise.resolve();
    } catch (error) {
      done = Promise.reject(error);
    }
    return done;
  };
  const disposer = run as Disposer & { active: boolean };
  Object.defineProperties(disposer, {
    active: { get: () => done === undefined },
    label: { value: label },
    [Symbol.dispose]: {
      value: () => {
        run().catch(() => {});
      },
    },
    [Symbol.asyncDispose]: { value: run },
  });
  return disposer;
}
