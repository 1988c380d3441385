/**
 * Disposers: the handles every registration returns.
 *
 * @module
 */

/** What an effect's setup may return: nothing, or a teardown (sync or async). */
export type Teardown = (() => void | Promise<void>) | void | undefined;

/**
 * The handle an effect returns. Calling it tears the effect down.
 *
 * Contract: idempotent (a second call does nothing and returns the first call's promise), self-removing (the
 * owning context forgets the effect), and usable with `using` (sync part) and `await using` (waits for an async
 * teardown).
 */
export interface Disposer {
  /** Tears the effect down; resolves once an async teardown has finished. */
  (): Promise<void>;
  /** False once the effect has been torn down. */
  readonly active: boolean;
  /** The label given when the effect was registered. */
  readonly label: string;
  /** Starts the teardown without waiting (for `using`). */
  [Symbol.dispose](): void;
  /** Tears the effect down and waits (for `await using`). */
  [Symbol.asyncDispose](): Promise<void>;
}
