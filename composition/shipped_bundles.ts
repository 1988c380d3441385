/**
 * The first-party bundles and profile templates (`bundles/`), found the same way however Terret was installed: read
 * from disk in a checkout (so an edit takes effect at once), and from the copy embedded in
 * `_shipped_bundles_data.ts` when the package runs from a registry (`jsr:`, where `import.meta.url` is `https:`) or
 * from a `deno compile` binary (whose embedded graph holds modules, not YAML). `deno task catalog` regenerates the
 * embedded copy; `deno task check` fails when it drifts from `bundles/`.
 *
 * @module
 */
import { displayPath, isFile } from "./_files.ts";
import { SHIPPED_BUNDLE_FILES } from "./_shipped_bundles_data.ts";

const FIRST_PARTY_BUNDLES = new URL("../bundles/", import.meta.url);

/** A shipped bundle file. */
export interface ShippedFile {
  /** Where it lives, for messages and provenance: a path in a checkout, else the package URL. */
  readonly file: string;
  /** Its text, when it is not read from disk (an embedded copy); `undefined` when `file` is a readable file. */
  readonly embedded?: string;
}

/**
 * Finds shipped file `relative` (`base.yml`, `profiles/headless/profile.yml`) under `bundles/`.
 *
 * @returns the file, or `undefined` when Terret ships no such file
 */
export async function findShippedFile(relative: string): Promise<ShippedFile | undefined> {
  if (relative.split("/").some((part) => part === ".." || part === "")) return undefined;
  const url = new URL(relative, FIRST_PARTY_BUNDLES);
  const file = displayPath(url);
  if (url.protocol === "file:" && await isFile(file)) return { file };
  const embedded = SHIPPED_BUNDLE_FILES[relative];
  return embedded === undefined ? undefined : { file, embedded };
}
