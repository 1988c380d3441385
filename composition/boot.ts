/**
 * `Terret.boot`: resolve a profile, prepare its rows (plugins loaded, tags materialised, configs validated), and
 * hand them to the kernel loader on a fresh context.
 *
 * @module
 */
import {
  type Context,
  createContext,
  type CreateContextOptions,
  Loader,
  LoaderKey,
} from "@terret/hames";
import { loaderRows, type PreparedRow, prepareRows } from "./prepare.ts";
import { type ResolvedProfile, type ResolveOptions, resolveProfile } from "./resolve.ts";

/** Options for {@linkcode bootProfile}. */
export interface BootOptions extends ResolveOptions {
  /** Consent to import plugins that config names by file path or URL (`--allow-config-code`). */
  readonly allowConfigCode?: boolean;
  /** Options for the root context (default: `production` mode). */
  readonly context?: CreateContextOptions;
  /** Aborting before the loader finishes disposes the context and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** A booted profile. Dispose it to unmount every row, newest first. */
export interface BootedTerret extends AsyncDisposable {
  /** The root context the rows are mounted on. */
  readonly ctx: Context;
  /** The loader (also provided on `ctx` under `loader`). */
  readonly loader: Loader;
  /** The resolved profile. */
  readonly resolved: ResolvedProfile;
  /** The enabled rows as mounted. */
  readonly rows: readonly PreparedRow[];
  /** Unmounts everything. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Boots a profile by name or path.
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
 * @throws {TerretError} a config error naming the file, the row, the key and the layer (see
 *   {@linkcode resolveProfile} and `prepareRows`), or the loader's `BootFailed`, `ServiceMissing`,
 *   `DependencyCycle`
 */
export async function bootProfile(
  profile: string,
  options: BootOptions = {},
): Promise<BootedTerret> {
  options.signal?.throwIfAborted();
  const resolved = await resolveProfile(profile, options);
  return await bootResolved(resolved, options);
}

/** Boots an already resolved profile (the CLI resolves once, then boots). */
export async function bootResolved(
  resolved: ResolvedProfile,
  options: BootOptions = {},
): Promise<BootedTerret> {
  const prepared = await prepareRows(resolved, {
    ...(options.env === undefined ? {} : { env: options.env }),
    allowConfigCode: options.allowConfigCode ?? false,
  });
  options.signal?.throwIfAborted();
  const ctx = createContext({ mode: "production", ...options.context });
  const loader = new Loader(ctx);
  try {
    ctx.provide(LoaderKey, loader);
    await loader.load(loaderRows(prepared));
    options.signal?.throwIfAborted();
  } catch (error) {
    await ctx.dispose();
    throw error;
  }
  return {
    ctx,
    loader,
    resolved,
    rows: prepared,
    dispose: () => ctx.dispose(),
    [Symbol.asyncDispose]: () => ctx.dispose(),
  };
}

/** The curated entry point: `Terret.boot(profile, options)` and `Terret.resolve(profile, options)`. */
export const Terret: {
  readonly boot: typeof bootProfile;
  readonly resolve: typeof resolveProfile;
} = Object.freeze({ boot: bootProfile, resolve: resolveProfile });
