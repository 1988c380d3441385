/**
 * The error codes that mean "the user's config is wrong" (as opposed to a bug or a failing service): the CLI prints
 * their message alone, without a stack trace, and exits 2.
 *
 * @module
 */
import type { TerretError } from "@terret/hames";
import { CORE_ERRORS, type CoreErrorCode } from "@terret/core";
import { COMPOSITION_ERRORS, type CompositionErrorCode } from "./errors.ts";

/** Codes of user config errors. */
export const USER_CONFIG_ERRORS: ReadonlySet<string> = new Set<
  CompositionErrorCode | CoreErrorCode
>([
  "ConfigSyntax",
  "CredentialsLocked",
  "CredentialsKeyInvalid",
  "CredentialsStoreInvalid",
  "ConfigShape",
  "ConfigInvalid",
  "ConfigCodeRefused",
  "PatchTargetMissing",
  "PatchAnchorMissing",
  "PatchNotFound",
  "ProfileNotFound",
  "BundleNotFound",
  "BundleNotDeclared",
  "PluginUnknown",
  "PluginConflict",
  "PluginLoadFailed",
  "TagUnresolved",
]);

/** True when `error` is a user config error (see {@linkcode USER_CONFIG_ERRORS}). */
export function isUserConfigError(error: unknown): error is TerretError {
  return (COMPOSITION_ERRORS.is(error) || CORE_ERRORS.is(error)) &&
    USER_CONFIG_ERRORS.has(error.code);
}
