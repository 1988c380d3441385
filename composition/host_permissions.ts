/**
 * The least-privilege host: the union of what every enabled row declares (its plugin's `permissions(config)`)
 * and what `trt` itself needs to resolve and boot the profile (its config files, plugin modules, the variables its
 * `!env` tags read), rendered as Deno permission flags.
 *
 * @module
 */
import { type HostPermissions, PERMISSION_KINDS, pluginPermissions } from "@terret/hames";
import { absolute } from "./_files.ts";
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

/**
 * Plans the permissions of a prepared profile.
 *
 * @param prepared the enabled rows, prepared (their configs parsed)
 * @throws {TypeError} when a plugin's permissions hook returns a malformed grant
 */
export function planPermissions(
  resolved: ResolvedProfile,
  prepared: readonly PreparedRow[],
): PermissionPlan {
  const requests: [string, HostPermissions][] = [];
  const cliRead = [...resolved.reads];
  const cliEnv: string[] = [];
  for (const row of prepared) {
    const source = resolved.plugins.get(row.composed.plugin);
    if (source?.readScope !== undefined) cliRead.push(source.readScope);
    cliEnv.push(...row.envRead);
  }
  requests.push([CLI_REQUESTER, { read: cliRead, env: cliEnv }]);
  for (const row of prepared) {
    requests.push([row.composed.id, pluginPermissions(row.plugin, row.parsed)]);
  }
  const grants = {} as Record<PermissionKind, PermissionGrant>;
  for (const kind of PERMISSION_KINDS) {
    grants[kind] = mergeKind(kind, requests, resolved.cwd);
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
): PermissionGrant {
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
      const scope = kind === "read" || kind === "write" || kind === "ffi"
        ? absolute(raw, cwd)
        : raw;
      const list = by.get(scope) ?? [];
      if (!list.includes(requester)) list.push(requester);
      by.set(scope, list);
    }
  }
  const paths = kind === "read" || kind === "write" || kind === "ffi";
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
