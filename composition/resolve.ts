/**
 * Profile resolution: finds the profile, reads its bundles (first-party, caller-given or discovered in packages),
 * then the profile patch, the home patch and `--patch` overlays, and composes their rows and settings. Resolution
 * reads data only: no plugin code runs and no tag is materialised.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type PluginLike, pluginName } from "@terret/hames";
import { TerretError } from "./errors.ts";
import { absolute, displayPath, isFile, readText, toUrl } from "./_files.ts";
import { findShippedFile } from "./shipped_bundles.ts";
import { findPackageBundle, readPackageBundle } from "./bundle_discovery.ts";
import { BUILTIN_PLUGINS } from "./builtin_plugins.ts";
import { type BundleFile, parseBundle, parsePatch, parseProfile } from "./config_files.ts";
import type { EnvReader } from "./config_tag.ts";
import { type ComposedRow, composeLayers, type Layer } from "./layers.ts";
import { isPathShaped, isUrlShaped, moduleSource, type PluginSource } from "./plugin_source.ts";

/** Options shared by resolution, boot, dump, doctor and permissions. */
export interface ResolveOptions {
  /** Terret home (default `$TERRET_HOME`, else `$HOME/.terret`). */
  readonly home?: string;
  /** The environment (default `Deno.env`); read for `TERRET_HOME`/`HOME` here and by `!env` at boot. */
  readonly env?: EnvReader;
  /** The working directory relative paths resolve against (default `Deno.cwd()`). */
  readonly cwd?: string;
  /** `--patch` files, applied last, in order. */
  readonly patches?: readonly string[];
  /** Built-in plugins (default: the first-party ones). */
  readonly builtins?: readonly PluginLike[];
  /** Extra directories searched for named bundles after the first-party ones (trusted: given by code). */
  readonly bundleDirs?: readonly (string | URL)[];
}

/** Where the profile was found. */
export interface ProfileLocation {
  /** The profile name (its directory name). */
  readonly name: string;
  /** The `profile.yml` path. */
  readonly file: string;
  /** The profile directory. */
  readonly dir: string;
  /** True when no profile of this name exists in the home and the shipped template is used. */
  readonly template: boolean;
}

/** One setting's value and where it was set. */
export interface SettingEntry {
  /** The value as written (tags unresolved). */
  readonly value: unknown;
  /** The layer that set it. */
  readonly layer: string;
  /** The file that set it. */
  readonly file: string;
  /** The line of the key in that file. */
  readonly line: number;
}

/** A resolved profile: composed rows with provenance, settings and plugin sources; nothing executed yet. */
export interface ResolvedProfile {
  /** The profile. */
  readonly profile: ProfileLocation;
  /** The Terret home used. */
  readonly home: string;
  /** The working directory used. */
  readonly cwd: string;
  /** The layers, in the order applied. */
  readonly layers: readonly Layer[];
  /** The composed rows, in order. */
  readonly rows: readonly ComposedRow[];
  /** Settings by top-level key. */
  readonly settings: ReadonlyMap<string, SettingEntry>;
  /** Plugin sources by name. */
  readonly plugins: ReadonlyMap<string, PluginSource>;
  /** Every file or directory the resolution read or probed (what a scoped host must be able to read). */
  readonly reads: readonly string[];
}

/** The Terret home: `home` if given, else `$TERRET_HOME`, else `$HOME/.terret`. */
export function terretHome(env: EnvReader, cwd: string, home?: string): string {
  const chosen = home ?? env.get("TERRET_HOME");
  if (chosen !== undefined && chosen !== "") return absolute(chosen, cwd);
  const user = env.get("HOME") ?? env.get("USERPROFILE");
  if (user === undefined) {
    throw new TerretError(
      "ProfileNotFound",
      "Cannot find the Terret home: neither TERRET_HOME nor HOME is set (pass --home DIR)",
    );
  }
  return join(user, ".terret");
}

/**
 * Resolves a profile by name (`headless`) or path (`./profiles/dev`, `dev/profile.yml`).
 *
 * @throws {TerretError} a user config error (`ProfileNotFound`, `BundleNotFound`, `ConfigSyntax`, `ConfigShape`,
 *   `PatchTargetMissing`, `PatchAnchorMissing`, `PluginConflict`, …) naming the file, the row and the key
 */
export async function resolveProfile(
  profile: string,
  options: ResolveOptions = {},
): Promise<ResolvedProfile> {
  const env = options.env ?? Deno.env;
  const cwd = options.cwd ?? Deno.cwd();
  const home = terretHome(env, cwd, options.home);
  const reads: string[] = [];
  // Shipped files that are not on disk (a registry install, a compiled binary): their embedded text by file.
  const embedded = new Map<string, string>();
  const read = (file: string): Promise<string> => {
    const text = embedded.get(file);
    return text === undefined ? readText(file) : Promise.resolve(text);
  };
  const location = await locateProfile(profile, home, cwd, reads, embedded);
  const profileFile = parseProfile(await read(location.file), location.file);
  const layers: Layer[] = [];
  const plugins = new Map<string, PluginSource>();
  for (const plugin of options.builtins ?? BUILTIN_PLUGINS) {
    addSource(plugins, { name: pluginName(plugin), declaredBy: "built-in", builtin: plugin });
  }
  for (const entry of profileFile.bundles) {
    const found = await locateBundle(
      entry,
      location,
      cwd,
      options.bundleDirs ?? [],
      reads,
      embedded,
    );
    const bundle = parseBundle(await read(found.file), found.file, `bundle ${entry}`);
    layers.push({ kind: "bundle", name: `bundle ${entry}`, file: found.file, rows: bundle.rows });
    addBundlePlugins(plugins, bundle, entry, found);
  }
  for (const [name, specifier] of Object.entries(profileFile.plugins)) {
    const gated = isPathShaped(specifier) || isUrlShaped(specifier);
    addSource(
      plugins,
      moduleSource(
        name,
        specifier,
        pathToFileURL(location.file),
        `profile ${location.file} line ${profileFile.lines.plugin(name)}`,
        gated ? "a profile plugins: entry that is a file path or URL" : undefined,
      ),
    );
  }
  const settings = new Map<string, SettingEntry>();
  for (const [key, value] of Object.entries(profileFile.settings)) {
    const line = profileFile.lines.settings(key);
    settings.set(key, { value, layer: "profile", file: location.file, line });
  }
  const shippedPatch = location.template
    ? await findShippedFile(`profiles/${location.name}/patch.yml`)
    : undefined;
  if (shippedPatch?.embedded !== undefined) embedded.set(shippedPatch.file, shippedPatch.embedded);
  const patches: [string, string, boolean][] = [
    ["profile patch", shippedPatch?.file ?? join(location.dir, "patch.yml"), false],
    ["home patch", join(home, "patch.yml"), false],
    ...(options.patches ?? []).map((file): [string, string, boolean] => [
      "--patch",
      absolute(file, cwd),
      true,
    ]),
  ];
  for (const [layer, file, required] of patches) {
    if (!embedded.has(file) && !(await isFile(file))) {
      if (!required) continue;
      throw new TerretError("PatchNotFound", `Cannot read patch "${file}": no such file`, {
        details: { file },
      });
    }
    if (!embedded.has(file)) reads.push(file);
    const patch = parsePatch(await read(file), file, layer);
    layers.push({ kind: "patch", name: layer, file, rows: patch.rows });
    for (const [key, value] of Object.entries(patch.settings)) {
      settings.set(key, { value, layer, file, line: patch.settingsLine(key) });
    }
  }
  return {
    profile: location,
    home,
    cwd,
    layers,
    rows: composeLayers(layers),
    settings,
    plugins,
    reads: [...new Set(reads)],
  };
}

async function locateProfile(
  profile: string,
  home: string,
  cwd: string,
  reads: string[],
  embedded: Map<string, string>,
): Promise<ProfileLocation> {
  if (profile.includes("/") || /\.ya?ml$/.test(profile)) {
    const path = absolute(profile, cwd);
    const file = /\.ya?ml$/.test(path) ? path : join(path, "profile.yml");
    if (!(await isFile(file))) {
      throw new TerretError(
        "ProfileNotFound",
        `Cannot find profile "${profile}": "${file}" does not exist`,
      );
    }
    reads.push(dirname(file));
    return { name: dirname(file).split("/").pop()!, file, dir: dirname(file), template: false };
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(profile)) {
    throw new TerretError(
      "ProfileNotFound",
      `Cannot find profile "${profile}": not a valid profile name`,
    );
  }
  const dir = join(home, "profiles", profile);
  if (await isFile(join(dir, "profile.yml"))) {
    reads.push(dir);
    return { name: profile, file: join(dir, "profile.yml"), dir, template: false };
  }
  const template = await findShippedFile(`profiles/${profile}/profile.yml`);
  if (template !== undefined) {
    const templateDir = template.file.slice(0, template.file.lastIndexOf("/"));
    if (template.embedded === undefined) reads.push(templateDir);
    else embedded.set(template.file, template.embedded);
    return { name: profile, file: template.file, dir: templateDir, template: true };
  }
  throw new TerretError(
    "ProfileNotFound",
    `Cannot find profile "${profile}": no "${
      join(dir, "profile.yml")
    }" and no shipped template of that name`,
  );
}

interface FoundBundle {
  readonly file: string;
  readonly consent?: string;
}

async function locateBundle(
  entry: string,
  profile: ProfileLocation,
  cwd: string,
  extraDirs: readonly (string | URL)[],
  reads: string[],
  embedded: Map<string, string>,
): Promise<FoundBundle> {
  if (isPathShaped(entry)) {
    const path = absolute(entry, profile.dir);
    const consent = `bundle "${entry}" is named by path in profile ${profile.file}`;
    if (/\.ya?ml$/.test(path)) {
      if (await isFile(path)) {
        reads.push(dirname(path));
        return { file: path, consent };
      }
      throw new TerretError(
        "BundleNotFound",
        `Cannot find bundle "${entry}": "${path}" does not exist`,
      );
    }
    const found = await readPackageBundle(path);
    reads.push(found!.packageDir);
    return { file: found!.bundleFile, consent };
  }
  const shipped = await findShippedFile(`${entry}.yml`);
  if (shipped !== undefined) {
    if (shipped.embedded === undefined) reads.push(shipped.file);
    else embedded.set(shipped.file, shipped.embedded);
    return { file: shipped.file };
  }
  for (const dir of extraDirs.map((dir) => toUrl(dir, cwd))) {
    const base = dir.href.endsWith("/") ? dir : new URL(`${dir.href}/`);
    const file = displayPath(new URL(`${entry}.yml`, base));
    if (await isFile(file)) {
      reads.push(file);
      return { file };
    }
  }
  const found = await findPackageBundle(entry, [profile.dir, cwd]);
  if (found !== undefined) {
    reads.push(found.packageDir);
    return { file: found.bundleFile };
  }
  throw new TerretError(
    "BundleNotFound",
    `Cannot find bundle "${entry}" (listed in ${profile.file}): not a shipped bundle, and no package "${entry}" declaring a terret bundle is installed in a node_modules directory above ${profile.dir} or ${cwd}`,
    { details: { bundle: entry, file: profile.file } },
  );
}

function addBundlePlugins(
  plugins: Map<string, PluginSource>,
  bundle: BundleFile,
  entry: string,
  found: FoundBundle,
): void {
  for (const [name, specifier] of Object.entries(bundle.plugins)) {
    addSource(
      plugins,
      moduleSource(
        name,
        specifier,
        pathToFileURL(found.file),
        `bundle ${entry} (${found.file})`,
        found.consent,
      ),
    );
  }
}

function addSource(plugins: Map<string, PluginSource>, source: PluginSource): void {
  const existing = plugins.get(source.name);
  if (existing === undefined) {
    plugins.set(source.name, source);
    return;
  }
  if (
    existing.module !== undefined && existing.module === source.module &&
    existing.exportName === source.exportName
  ) return;
  throw new TerretError(
    "PluginConflict",
    `Cannot declare plugin "${source.name}" in ${source.declaredBy}: it is already declared by ${existing.declaredBy}`,
    { details: { plugin: source.name } },
  );
}
