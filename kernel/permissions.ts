/**
 * Host permissions a plugin declares for a given config: the data `trt permissions` turns into Deno `--allow-*`
 * flags so a host runs with exactly what its rows need. The kernel only carries the declaration; it never checks
 * or enforces it.
 *
 * @module
 */
import { isServiceClass, type PluginLike } from "./plugin.ts";
import type { ServiceKey } from "./service_key.ts";

/**
 * What a plugin needs from the host to do its work with one config, in Deno's permission vocabulary.
 *
 * Each key is a list of scopes (never a bare grant): `read`/`write` are file or directory paths (absolute, or
 * relative to the working directory; a directory covers its subtree), `net` is `host`, `host:port` or
 * `*.domain`, `env` is variable names (a trailing `*` is a prefix wildcard), `run` is program names or absolute
 * paths, `ffi` is library paths, `sys` is `hostname`, `osRelease`, `cpus` and the other Deno sys kinds. `true` asks
 * for the whole category unscoped; doctor and `trt permissions` name such a grant, since it defeats scoping.
 */
export interface HostPermissions {
  /** Paths the plugin reads. */
  readonly read?: readonly string[] | true;
  /** Paths the plugin writes (and creates). */
  readonly write?: readonly string[] | true;
  /** Hosts the plugin connects to or listens on. */
  readonly net?: readonly string[] | true;
  /** Environment variables the plugin reads. */
  readonly env?: readonly string[] | true;
  /** Programs the plugin spawns (a spawned program is not sandboxed by Deno). */
  readonly run?: readonly string[] | true;
  /** Native libraries the plugin loads. */
  readonly ffi?: readonly string[] | true;
  /** System information the plugin queries. */
  readonly sys?: readonly string[] | true;
}

/** The permission categories of {@linkcode HostPermissions}, in the order flags are printed. */
export const PERMISSION_KINDS: readonly (keyof HostPermissions)[] = Object.freeze([
  "read",
  "write",
  "net",
  "env",
  "run",
  "ffi",
  "sys",
]);

/** The row that provides a service, as a {@linkcode PermissionDeps} lookup reports it. */
export interface ProvidingRow {
  /** The row's plugin name (`"workspace"`). */
  readonly plugin: string;
  /** The row's validated config (defaults applied, tags materialised). */
  readonly config: unknown;
}

/**
 * What a permissions hook may know besides its own config: the rows that provide the services the plugin
 * injects. A plugin whose needs follow another row's config (the `fs` row reads and writes exactly the
 * directories the `workspace` row grants) derives them from that row here instead of repeating its values.
 */
export interface PermissionDeps {
  /**
   * The enabled row that provides `key`, or `undefined` when no row does or when `key` is not one of the
   * plugin's `inject` keys (a hook sees only what it depends on).
   */
  provider(key: ServiceKey<unknown>): ProvidingRow | undefined;
}

/** Dependencies that know no rows (what a hook sees when its plugin is asked on its own). */
export const NO_PERMISSION_DEPS: PermissionDeps = Object.freeze({ provider: () => undefined });

/**
 * The hook a plugin implements to declare its {@linkcode HostPermissions}.
 *
 * Contract: a pure function of the validated config (defaults applied, tags materialised) and of the configs of
 * the rows it depends on (`deps`): it must not perform I/O, touch the context or read the environment, and it
 * returns the same grant for the same inputs. A hook that cannot tell what a dependency needs (a provider it does
 * not know) asks for the whole category rather than guessing narrow. It throws a `TypeError` for a config it
 * cannot derive a grant from.
 */
export type PermissionsHook<C> = (config: C, deps: PermissionDeps) => HostPermissions;

/**
 * The host permissions a plugin declares for `config`, validated for shape.
 *
 * @param plugin a functional plugin or a `Service` class, with or without a `permissions` hook
 * @param config the config the plugin will be mounted with, already parsed by its schema
 * @param deps the rows providing what it injects (default: none known); the hook is shown only its `inject` keys
 * @returns the declared grant (empty when the plugin declares none)
 * @throws {TypeError} when the hook returns something that is not a {@linkcode HostPermissions}
 */
export function pluginPermissions(
  plugin: PluginLike,
  config: unknown,
  deps: PermissionDeps = NO_PERMISSION_DEPS,
): HostPermissions {
  const hook = plugin.permissions;
  if (hook === undefined) return {};
  const inject = plugin.inject;
  const injected = typeof inject === "function" ? inject(config) : inject ?? [];
  const scoped: PermissionDeps = {
    provider: (key) => injected.includes(key) ? deps.provider(key) : undefined,
  };
  const declared: unknown = (hook as PermissionsHook<unknown>).call(plugin, config, scoped);
  const name = isServiceClass(plugin) ? plugin.pluginName ?? plugin.name : plugin.name;
  if (typeof declared !== "object" || declared === null || Array.isArray(declared)) {
    throw new TypeError(`Cannot read the permissions of plugin "${name}": expected an object`);
  }
  for (const [key, value] of Object.entries(declared)) {
    if (!(PERMISSION_KINDS as readonly string[]).includes(key)) {
      throw new TypeError(
        `Cannot read the permissions of plugin "${name}": unknown permission "${key}" (expected ${
          PERMISSION_KINDS.join(", ")
        })`,
      );
    }
    const valid = value === true || value === undefined ||
      (Array.isArray(value) &&
        value.every((scope) =>
          typeof scope === "string" && scope.length > 0 && !scope.includes(",")
        ));
    if (!valid) {
      throw new TypeError(
        `Cannot read the permissions of plugin "${name}": "${key}" must be true or a list of non-empty scopes without commas`,
      );
    }
  }
  return declared as HostPermissions;
}
