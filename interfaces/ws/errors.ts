/**
 * The socket's error codes.
 *
 * @module
 */
import {
  defineErrorCodes,
  type ErrorCodes,
  TerretError as BaseTerretError,
  type TerretErrorConstructor,
} from "@terret/hames";
import { CORE_ERRORS, type CoreErrorCode } from "@terret/core";

/** The codes the socket throws, each with the condition it names (rendered into `docs/errors.md`). */
export const WS_ERROR_CODES = {
  AddrInUse: "The socket's listen address is already in use by another process",
  ApprovalsDisabled: "An approval answer reached a server with no approvals row enabled",
  NoToken: "The socket was started with no token configured",
  QuotaExceeded:
    "A token asked for more new agents or connections than its quota allows (retryable)",
  TokenFileExposed: "The token file is readable by other users",
  TokenFileInvalid: "The token file cannot be read as a token",
  TokenInvalid: "A configured token is not 16 to 512 characters from the allowed set",
} as const;

/** A code the socket throws, or one of core's or the kernel's. */
export type WsErrorCode = keyof typeof WS_ERROR_CODES | CoreErrorCode;

/** The socket's error code table; its guard also accepts core's and the kernel's codes. */
export const WS_ERRORS: ErrorCodes<keyof typeof WS_ERROR_CODES, WsErrorCode> = defineErrorCodes(
  "@terret/ws",
  WS_ERROR_CODES,
  [CORE_ERRORS],
);

/**
 * `TerretError` for this package's own throw sites: the same constructor, its code checked against
 * {@linkcode WsErrorCode}.
 */
export const TerretError: TerretErrorConstructor<WsErrorCode> = BaseTerretError;
/** A `TerretError` (the type of the binding above). */
export type TerretError<C extends string = string> = BaseTerretError<C>;
