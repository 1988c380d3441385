/**
 * Composition's error codes.
 *
 * @module
 */
import {
  defineErrorCodes,
  type ErrorCodes,
  HAMES_ERRORS,
  type HamesErrorCode,
  TerretError as BaseTerretError,
  type TerretErrorConstructor,
} from "@terret/hames";

/** The codes composition throws, each with the condition it names (rendered into `docs/errors.md`). */
export const COMPOSITION_ERROR_CODES = {
  BundleNotDeclared: "A package names no bundle in its metadata",
  BundleNotFound: "No bundle file has the name",
  ConfigCodeRefused:
    "Config names plugin code to run and the operator did not pass --allow-config-code",
  ConfigShape: "A bundle, profile or patch file does not have the expected shape",
  ConfigSyntax: "A config file is not valid YAML",
  HomeLocked: "Another trt serve holds the Terret home's lock (one server per home)",
  PatchAnchorMissing: "A patch inserts a row before or after a row that does not exist",
  PatchNotFound: "No patch file is at the path",
  PatchTargetMissing: "A patch overrides a row id no earlier layer declares",
  PluginConflict: "Two plugins are declared under one name",
  PluginLoadFailed: "A plugin module failed to import or exports no plugin",
  PluginUnknown: "A row names a plugin no bundle declares",
  ProfileNotFound: "No profile has the name, or the Terret home cannot be found",
  TagUnresolved: "A config tag (`!env`, `!file`, …) cannot be resolved",
} as const;

/** A code composition throws, or one of the kernel's. */
export type CompositionErrorCode = keyof typeof COMPOSITION_ERROR_CODES | HamesErrorCode;

/** Composition's error code table; its guard also accepts the kernel's codes. */
export const COMPOSITION_ERRORS: ErrorCodes<
  keyof typeof COMPOSITION_ERROR_CODES,
  CompositionErrorCode
> = defineErrorCodes("@terret/terret", COMPOSITION_ERROR_CODES, [HAMES_ERRORS]);

/**
 * `TerretError` for this package's own throw sites: the same constructor, its code checked against
 * {@linkcode CompositionErrorCode}.
 */
export const TerretError: TerretErrorConstructor<CompositionErrorCode> = BaseTerretError;
/** A `TerretError` (the type of the binding above). */
export type TerretError<C extends string = string> = BaseTerretError<C>;
