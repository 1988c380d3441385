/**
 * Exec's error codes.
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

/** The codes exec throws, each with the condition it names (rendered into `docs/errors.md`). */
export const EXEC_ERROR_CODES = {
  Denied:
    "A path, command, host or fetch is outside what the workspace grant or the sandbox allows",
  EditAmbiguous:
    "The text to replace occurs more than once and the edit did not ask to replace all",
  FetchFailed: "A web fetch failed before a response arrived",
  IoError: "The operating system refused a file operation for another reason",
  JobCapExceeded: "Starting a background job would exceed the running jobs one agent may have",
  JobNotFound: "No background job of the agent has the id",
  NotADirectory: "A path component is not a directory",
  NotAFile: "The path names a directory where a file is needed",
  NotFound: "No such file, directory or program",
  NotText: "A file is not UTF-8 text",
  SandboxUnavailable: "The sandbox provider cannot run on this host",
  ServiceStopped: "A process service was used after it stopped",
  ShellFailed: "A persistent shell could not start or died",
  SpawnFailed: "A command could not be spawned",
  TerminalCapExceeded: "Opening a terminal would exceed the configured number of terminals",
  TerminalExists: "A terminal with the name is already open",
  TerminalExited: "Input was sent to a terminal whose program has exited",
  TerminalNotFound: "No open terminal has the name",
  Timeout: "A command, search or fetch ran past its time limit",
  TooLarge: "A file or response is over the size limit",
  TooManyRedirects: "A web fetch followed more redirects than allowed",
} as const;

/** A code exec throws, or one of core's or the kernel's. */
export type ExecErrorCode = keyof typeof EXEC_ERROR_CODES | CoreErrorCode;

/** Exec's error code table; its guard also accepts core's and the kernel's codes. */
export const EXEC_ERRORS: ErrorCodes<keyof typeof EXEC_ERROR_CODES, ExecErrorCode> =
  defineErrorCodes("@terret/exec", EXEC_ERROR_CODES, [CORE_ERRORS]);

/**
 * `TerretError` for this package's own throw sites: the same constructor, its code checked against
 * {@linkcode ExecErrorCode}.
 */
export const TerretError: TerretErrorConstructor<ExecErrorCode> = BaseTerretError;
/** A `TerretError` (the type of the binding above). */
export type TerretError<C extends string = string> = BaseTerretError<C>;
