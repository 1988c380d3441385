/**
 * Terret, an agent harness: the runtime that drives LLM agents for orchestrators and editors. This meta package
 * re-exports the kernel and carries composition: bundles of config rows, profiles that stack them, patches that
 * override rows by id, and `Terret.boot`, which resolves a profile and hands its rows to the kernel loader.
 *
 * @example
 * ```ts
 * import { Terret } from "@terret/terret";
 * // A throwaway home, and a patch that turns the socket off (rows are patched by id).
 * const home = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${home}/dev.yml`, "rows:\n  - id: interfaces.ws\n    disabled: true\n");
 * await using terret = await Terret.boot("headless", { home, patches: [`${home}/dev.yml`] });
 * console.log(terret.rows.map((row) => row.composed.id)); // [ "workspace", "credentials", … ]
 * ```
 *
 * @module
 */
export {
  COMPOSITION_ERROR_CODES,
  COMPOSITION_ERRORS,
  type CompositionErrorCode,
} from "./composition/errors.ts";
export { createContext, definePlugin, defineService, TerretError } from "@terret/hames";
export {
  type BootedTerret,
  type BootOptions,
  bootProfile,
  bootResolved,
  Terret,
} from "./composition/boot.ts";
export {
  type ProfileLocation,
  type ResolvedProfile,
  type ResolveOptions,
  resolveProfile,
  type SettingEntry,
  terretHome,
} from "./composition/resolve.ts";
export {
  loaderRows,
  type PreparedRow,
  type PrepareOptions,
  prepareRow,
  prepareRows,
} from "./composition/prepare.ts";
export {
  collectTags,
  ConfigTag,
  type ConfigTagKind,
  type EnvReader,
  materialise,
  type TagScope,
  type TagSite,
} from "./composition/config_tag.ts";
export {
  type BundleFile,
  parseBundle,
  parsePatch,
  parseProfile,
  type PatchFile,
  type ProfileFile,
  ROW_ID,
  type RowSpec,
  type SourceRef,
} from "./composition/config_files.ts";
export {
  type ComposedRow,
  composeLayers,
  type Layer,
  type LayerKind,
} from "./composition/layers.ts";
export {
  findPackageBundle,
  type PackageBundle,
  readPackageBundle,
} from "./composition/bundle_discovery.ts";
export {
  isPathShaped,
  isPluginLike,
  isUrlShaped,
  loadPlugin,
  type PluginSource,
} from "./composition/plugin_source.ts";
export {
  acquireHomeLock,
  ensureHome,
  HOME_LOCK_FILE,
  type HomeLock,
  homeLockPath,
} from "./composition/home_lock.ts";
export { BUILTIN_PLUGINS } from "./composition/builtin_plugins.ts";
export { dumpConfig } from "./composition/dump_config.ts";
export {
  CLI_REQUESTER,
  IGNORED_ENV,
  permissionFlags,
  type PermissionGrant,
  type PermissionKind,
  type PermissionPlan,
  type PlanOptions,
  planPermissions,
} from "./composition/host_permissions.ts";
export {
  COMPOSITION_CHECKS,
  type DoctorCheck,
  type DoctorFinding,
  type DoctorInput,
  type FindingLevel,
  permissionsCheck,
  rowsCheck,
  runDoctor,
} from "./composition/doctor.ts";
export { homeCheck } from "./composition/home_check.ts";
export { isUserConfigError, USER_CONFIG_ERRORS } from "./composition/config_errors.ts";
