/**
 * The kernel's error codes.
 *
 * @module
 */
import { defineErrorCodes, type ErrorCodes } from "./error_codes.ts";
import { TerretError as BaseTerretError, type TerretErrorConstructor } from "./errors.ts";

/** The codes the kernel throws, each with the condition it names (rendered into `docs/errors.md`). */
export const HAMES_ERROR_CODES = {
  BootFailed: "A row failed to mount while the loader booted a config",
  ConfigInvalid: "A row's config does not match its plugin's schema",
  ContextDisposed: "A registration or dispatch reached a context that is already disposed",
  ContractViolation:
    "An undeclared event, a dispatch in the wrong mode, or a payload or result that fails its schema",
  DependencyCycle: "The rows' injected services depend on each other in a cycle",
  RowConflict: "Two rows share an id",
  RowNotFound: "A reconfigure or unload named a row the loader does not hold",
  ServiceConflict: "A context already provides the service key",
  ServiceMissing:
    "No context in the chain provides the service key, or no row provides an injected one",
} as const;

/** A code the kernel throws. */
export type HamesErrorCode = keyof typeof HAMES_ERROR_CODES;

/** The kernel's error code table and its guard. */
export const HAMES_ERRORS: ErrorCodes<HamesErrorCode> = defineErrorCodes(
  "@terret/hames",
  HAMES_ERROR_CODES,
);

/**
 * `TerretError` for this package's own throw sites: the same constructor, its code checked against
 * {@linkcode HamesErrorCode}.
 */
export const TerretError: TerretErrorConstructor<HamesErrorCode> = BaseTerretError;
/** A `TerretError` (the type of the binding above). */
export type TerretError<C extends string = string> = BaseTerretError<C>;
