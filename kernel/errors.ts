/**
 * The one domain error base for Terret and its kernel.
 *
 * Misuse of an API (a wrong argument shape, an out-of-range value) throws the built-in `TypeError` or
 * `RangeError`. Conditions a caller is expected to catch throw a {@linkcode TerretError} whose `code` names the
 * condition, so callers branch on `error.code` rather than on message text.
 *
 * @module
 */

/**
 * A condition callers are expected to catch, identified by a stable `code`.
 *
 * Codes used by the kernel: `ContractViolation` (an undeclared event, a dispatch in the wrong mode, a payload that
 * fails its schema), `ServiceMissing`, `DependencyCycle`, `BootFailed`, `ConfigInvalid`, `ContextDisposed`,
 * `RowNotFound`. Other packages add their own codes (`Denied`, `EditAmbiguous`, `LogInvariantViolation`, …).
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
export class TerretError extends Error {
  /** The stable identifier of the condition, e.g. `"Denied"`. */
  readonly code: string;
  /** Structured detail for programmatic callers (never secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  /**
   * @param code the stable condition identifier
   * @param message a sentence-case message without a trailing period, starting with the failed action
   * @param options `cause` when wrapping another error, `details` for structured context
   */
  constructor(
    code: string,
    message: string,
    options: { cause?: unknown; details?: Readonly<Record<string, unknown>> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TerretError";
    this.code = code;
    this.details = options.details;
  }
}

/** Returns true when `error` is a {@linkcode TerretError} with the given `code`. */
export function isTerretError(error: unknown, code?: string): error is TerretError {
  return error instanceof TerretError && (code === undefined || error.code === code);
}
