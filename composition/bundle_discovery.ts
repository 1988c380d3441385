/**
 * Third-party bundle discovery: a package declares the bundle it ships in its metadata,
 * `"terret": {"bundle": "bundle.yml"}` in `deno.json` or `package.json`, and a profile composes it by listing the
 * package's name under `bundles:`. Packages are found in `node_modules` directories above the profile and the
 * working directory, the way Node resolves them.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { TerretError } from "./errors.ts";
import { isFile, readText } from "./_files.ts";

/** A bundle a package declares in its metadata. */
export interface PackageBundle {
  /** The package name from its metadata (or the directory name). */
  readonly packageName: string;
  /** The package root directory. */
  readonly packageDir: string;
  /** The metadata file that declared the bundle. */
  readonly metadataFile: string;
  /** The bundle YAML file, inside the package. */
  readonly bundleFile: string;
}

const METADATA_FILES = ["deno.json", "package.json"] as const;

/**
 * Finds package `name` in a `node_modules` directory at or above each of `from`, in order, and reads its bundle.
 *
 * @returns the bundle, or `undefined` when no such package is installed
 * @throws {TerretError} `BundleNotDeclared` when the package exists but declares no terret bundle, `ConfigShape` for
 *   malformed metadata
 */
export async function findPackageBundle(
  name: string,
  from: readonly string[],
): Promise<PackageBundle | undefined> {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) return undefined;
  const seen = new Set<string>();
  for (const start of from) {
    for (let dir = resolve(start);; dir = dirname(dir)) {
      const candidate = join(dir, "node_modules", name);
      if (!seen.has(candidate)) {
        seen.add(candidate);
        const found = await readPackageBundle(candidate, { required: false });
        if (found !== undefined) return found;
      }
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/**
 * Reads the bundle a package directory declares.
 *
 * @param options `required: false` returns `undefined` for a directory without metadata instead of throwing
 * @throws {TerretError} `BundleNotDeclared`, `BundleNotFound` or `ConfigShape`
 */
export async function readPackageBundle(
  packageDir: string,
  options: { required?: boolean } = {},
): Promise<PackageBundle | undefined> {
  for (const file of METADATA_FILES) {
    const metadataFile = join(packageDir, file);
    if (!(await isFile(metadataFile))) continue;
    let metadata: { name?: unknown; terret?: { bundle?: unknown } };
    try {
      metadata = JSON.parse(await readText(metadataFile));
    } catch (error) {
      throw new TerretError(
        "ConfigShape",
        `Cannot read package metadata "${metadataFile}": ${(error as Error).message}`,
        { details: { file: metadataFile } },
      );
    }
    const bundle = metadata?.terret?.bundle;
    if (bundle === undefined) continue;
    if (typeof bundle !== "string" || bundle.length === 0) {
      throw new TerretError(
        "ConfigShape",
        `Cannot read package metadata "${metadataFile}": "terret.bundle" must be a file path inside the package`,
        { details: { file: metadataFile } },
      );
    }
    const bundleFile = resolve(packageDir, bundle);
    if (relative(packageDir, bundleFile).startsWith("..")) {
      throw new TerretError(
        "ConfigShape",
        `Cannot read package metadata "${metadataFile}": "terret.bundle" points outside the package ("${bundle}")`,
        { details: { file: metadataFile } },
      );
    }
    if (!(await isFile(bundleFile))) {
      throw new TerretError(
        "BundleNotFound",
        `Cannot read the bundle of package "${packageDir}": "${bundleFile}" does not exist`,
        { details: { file: metadataFile } },
      );
    }
    const packageName = typeof metadata.name === "string" ? metadata.name : packageDir;
    return { packageName, packageDir, metadataFile, bundleFile };
  }
  if (options.required === false) {
    const any = await Promise.all(METADATA_FILES.map((file) => isFile(join(packageDir, file))));
    if (!any.some(Boolean)) return undefined;
  }
  throw new TerretError(
    "BundleNotDeclared",
    `Cannot compose package "${packageDir}": it declares no terret bundle (add "terret": {"bundle": "bundle.yml"} to its deno.json or package.json)`,
    { details: { package: packageDir } },
  );
}
