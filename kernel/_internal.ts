/**
 * The symbol through which kernel modules reach a context's realm and scope. Not exported from `mod.ts`.
 *
 * @module
 */
import type { Realm } from "./_realm.ts";
import type { Scope } from "./_scope.ts";

/** Key of the internal accessor on {@linkcode Context}. */
export const INTERNAL: unique symbol = Symbol("terret.hames.internal") as never;

/** What the internal accessor returns. */
export interface ContextInternals {
  readonly realm: Realm;
  readonly scope: Scope;
}
