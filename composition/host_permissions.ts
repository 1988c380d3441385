/**
 * The least-privilege host: the union of what every enabled row declares (its plugin's `permissions(config)`)
 * and what `trt` itself needs to resolve and boot the profile (its config files, plugin modules, the variables its
 * `!env` tags read), rendered as Deno permission flags.
 *
 * @module
 */
import { homeLockPath } from "./home_lock.ts";
import {
  type HostPermissions,
  PERMISSION_KINDS,
  type PermissionDeps,
  pluginPermissions,
  pluginProvides,
  type ServiceKey,
} from "@terret/hames";
import { absolute } from "./_files.ts";
import type { EnvReader } from "./config_tag.ts";
import type { PreparedRow } from "./prepare.ts";
import type { ResolvedProfile } from "./resolve.ts";

/** A permission category. */
export type PermissionKind = keyof HostPermissions;

/** One category of a plan: its scopes and who asked for each. */
export interface PermissionGrant {
  /** True when some requester asked for the whole category. */
  readonly unscoped: boolean;
  /** Who asked for the whole category. */
  readonly unscopedBy: readonly string[];
  /** The scopes, sorted, with covered paths folded into their directory. */
  readonly scopes: readonly string[];
  /** For each scope, the row ids (or `trt`) that asked for it. */
  readonly by: Readonly<Record<string, readonly string[]>>;
}

/** The permissions a resolved profile needs to run. */
export interface PermissionPlan {
  /** Every category, in flag order. */
  readonly grants: Readonly<Record<PermissionKind, PermissionGrant>>;
  /** Variables that libraries probe and that read as unset instead of needing a grant. */
  readonly ignoreEnv: readonly string[];
}

/** The requester name for what the CLI itself needs. */
export const CLI_REQUESTER = "trt";

/**
 * Variables the `yaml` library probes on every parse (`LOG_TOKENS`, `LOG_STREAM`, debug switches); the host
 * ignores them (they read as unset) rather than granting them.
 */
export const IGNORED_ENV: readonly string[] = Object.freeze(["LOG_STREAM", "LOG_TOKENS"]);

/** Options for {@linkcode planPermissions}. */
export interface PlanOptions {
  /** Where `HOME` is read to expand a path scope starting with `~` (default `Deno.env`). */
  readonly env?: EnvReader;
}

/**
 * Plans the permissions of a prepared profile. Each row's hook sees the rows providing the services it injects
 * (the first enabled row providing each). Path scopes (`read`, `write`, `ffi`) are made absolute (`~` expanded
 * with `HOME`, relative ones against the profile's cwd), and a scope that exists through a symbolic link is
 * granted at its real location too: Deno checks the path as given without resolving links, and code that resolves
 * one (the workspace does) then touches the real path.
 *
 * @param prepared the enabled rows, prepared (their configs parsed)
 * @throws {TypeError} when a plugin's permissions hook returns a malformed grant
 */
export function planPermissions(
  resolved: ResolvedProfile,
  prepared: readonly PreparedRow[],
  options: PlanOptions = {},
): PermissionPlan {
  const requests: [string, HostPermissions][] = [];
  const cliRead = [...resolved.reads];
  const cliEnv: string[] = [];
  for (const row of prepared) {
    const source = resolved.plugins.get(row.composed.plugin);
    if (source?.readScope !== undefined) cliRead.push(source.readScope);
    cliEnv.push(...row.envRead);
  }
  // `trt serve` holds the home's serve lock for its life.
  const lock = homeLockPath(resolved.home);
  requests.push([CLI_REQUESTER, { read: [...cliRead, lock], write: [lock], env: cliEnv }]);
  const providers = new Map<ServiceKey<unknown>, PreparedRow>();
  for (const row of prepared) {
    for (const key of pluginProvides(row.plugin)) {
      if (!providers.has(key)) providers.set(key, row);
    }
  }
  for (const row of prepared) {
    const deps: PermissionDeps = {
      provider(key) {
        const found = providers.get(key);
        return found === undefined || found === row
          ? undefined
          : { plugin: found.composed.plugin, config: found.parsed };
      },
    };
    requests.push([row.composed.id, pluginPermissions(row.plugin, row.parsed, deps)]);
  }
  const home = readHome(options.env);
  const grants = {} as Record<PermissionKind, PermissionGrant>;
  for (const kind of PERMISSION_KINDS) {
    grants[kind] = mergeKind(kind, requests, resolved.cwd, home);
  }
  return { grants, ignoreEnv: IGNORED_ENV };
}

/**
 * Renders a plan as Deno flags, one per category that grants anything, then `--ignore-env`.
 *
 * @example
 * ```ts
 * // ["--allow-read=/home/u/.terret/patch.yml,/home/u/.terret/profiles/headless", "--ignore-env=LOG_STREAM,LOG_TOKENS"]
 * ```
 */
export function permissionFlags(plan: PermissionPlan): string[] {
  const flags: string[] = [];
  for (const kind of PERMISSION_KINDS) {
    const grant = plan.grants[kind];
    if (grant.unscoped) flags.push(`--allow-${kind}`);
    else if (grant.scopes.length > 0) flags.push(`--allow-${kind}=${grant.scopes.join(",")}`);
  }
  if (plan.ignoreEnv.length > 0 && !plan.grants.env.unscoped) {
    const ignored = plan.ignoreEnv.filter((name) => !plan.grants.env.scopes.includes(name));
    if (ignored.length > 0) flags.push(`--ignore-env=${ignored.join(",")}`);
  }
  return flags;
}

function mergeKind(
  kind: PermissionKind,
  requests: readonly [string, HostPermissions][],
  cwd: string,
  home: string | undefined,
): PermissionGrant {
  const paths = kind === "read" || kind === "write" || kind === "ffi";
  const by = new Map<string, string[]>();
  const unscopedBy: string[] = [];
  for (const [requester, grant] of requests) {
    const value = grant[kind];
    if (value === undefined) continue;
    if (value === true) {
      unscopedBy.push(requester);
      continue;
    }
    for (const raw of value) {
      for (const scope of paths ? pathScopes(raw, cwd, home) : [raw]) {
        const list = by.get(scope) ?? [];
        if (!list.includes(requester)) list.push(requester);
        by.set(scope, list);
      }
    }
  }
  const scopes = [...by.keys()].sort();
  const kept = paths
    ? scopes.filter((scope) => !scopes.some((other) => covers(other, scope)))
    : scopes;
  const record: Record<string, string[]> = {};
  for (const scope of kept) {
    const folded = scopes.filter((other) => other === scope || (paths && covers(scope, other)));
    record[scope] = [...new Set(folded.flatMap((other) => by.get(other)!))];
  }
  return { unscoped: unscopedBy.length > 0, unscopedBy, scopes: kept, by: record };
}

function covers(dir: string, path: string): boolean {
  return dir !== path && (path.startsWith(dir.endsWith("/") ? dir : `${dir}/`) || dir === "/");
}

/** A path scope made absolute, then also its real location when that differs (it exists through a link). */
function pathScopes(raw: string, cwd: string, home: string | undefined): string[] {
  const expanded = home !== undefined && (raw === "~" || raw.startsWith("~/"))
    ? `${home}${raw.slice(1)}`
    : raw;
  const path = absolute(expanded, cwd);
  let real: string | undefined;
  try {
    real = Deno.realPathSync(path);
  } catch {
    real = undefined; // missing or unreadable: granted as written
  }
  return real === undefined || real === path ? [path] : [path, real];
}

function readHome(env: EnvReader | undefined): string | undefined {
  try {
    const home = (env ?? Deno.env).get("HOME");
    return home === undefined || home === "" ? undefined : home;
  } catch {
    return undefined;
  }
}
