/**
 * The one domain error base for Terret and its kernel.
 *
 * Misuse of an API (a wrong argument shape, an out-of-range value) throws the built-in `TypeError` or
 * `RangeError`. Conditions a caller is expected to catch throw a {@linkcode TerretError} whose `code` names the
 * condition, so callers branch on `error.code` rather than on message text.
 *
 * @module
 */
import type { HamesErrorCode } from "./hames_errors.ts";

/**
 * A condition callers are expected to catch, identified by a stable `code`.
 *
 * Each package declares the codes it throws in a table (`HAMES_ERRORS` for the kernel, `CORE_ERRORS`,
 * `EXEC_ERRORS`, …; see {@linkcode defineErrorCodes} and `docs/errors.md`), whose `is` guard accepts only declared
 * codes.
 *
 * @example
 * ```ts
 * import { TerretError } from "@terret/hames";
 * try {
 *   throw new TerretError("Denied", 'Cannot read "/etc/passwd": outside the granted workspace');
 * } catch (error) {
 *   if (error instanceof TerretError && error.code === "Denied") console.log("denied");
 * }
 * ```
 */
export class TerretError<C extends string = string> extends Error {
  /** The stable identifier of the condition, e.g. `"Denied"`. */
  readonly code: C;
  /** Structured detail for programmatic callers (never secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  /**
   * @param code the stable condition identifier, declared in its package's error code table
   * @param message a sentence-case message without a trailing period, starting with the failed action
   * @param options `cause` when wrapping another error, `details` for structured context
   */
  constructor(code: C, message: string, options: TerretErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TerretError";
    this.code = code;
    this.details = options.details;
  }
}

/** Options for a {@linkcode TerretError}. */
export interface TerretErrorOptions {
  /** The error being wrapped. */
  readonly cause?: unknown;
  /** Structured context for programmatic callers (never secrets). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * {@linkcode TerretError}'s constructor with its code narrowed to a package's codes. A package binds it to its own
 * union (`export const TerretError: TerretErrorConstructor<CoreErrorCode> = BaseTerretError`) and its throw sites
 * import that binding, so `new TerretError("SessionNotFund", …)` does not compile there. It is the same
 * constructor: `instanceof` and the guards see no difference.
 */
export interface TerretErrorConstructor<C extends string> {
  /** Makes a {@linkcode TerretError} whose code is one of `C`. */
  new <K extends C>(code: K, message: string, options?: TerretErrorOptions): TerretError<K>;
  /** `instanceof` narrows to any {@linkcode TerretError}: a caught one may carry another package's code. */
  readonly prototype: TerretError;
}

/**
 * Returns true when `error` is a {@linkcode TerretError}, with the given kernel `code` when one is passed. The code
 * is checked against the kernel's table at compile time (`isTerretError(error, "BootFaild")` does not compile);
 * for another package's codes use its table's guard (`CORE_ERRORS.is(error, "SessionNotFound")`).
 */
export function isTerretError<C extends HamesErrorCode>(
  error: unknown,
  code?: C,
): error is TerretError<C> {
  return error instanceof TerretError && (code === undefined || error.code === code);
}
