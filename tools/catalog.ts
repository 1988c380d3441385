// deno-lint-ignore-file no-console
/**
 * Generates `docs/events.md`, `docs/config-catalog.md` and `docs/errors.md` from the declarations every package exports,
 * `composition/_shipped_bundles_data.ts` (the embedded copy of `bundles/`) and `interfaces/ws/_console_assets.ts` (the
 * embedded web console).
 * With `--check`, writes nothing and exits 1 when a committed catalog drifts from the code.
 *
 * Run: deno task catalog [--check]
 *
 * @module
 */
import { renderConfigCatalog, renderErrorCatalog, renderEventCatalog } from "@terret/hames";
import { CATALOG_ERRORS, CATALOG_EVENTS, CATALOG_PLUGINS } from "./catalog_sources.ts";
import { renderShippedBundles } from "./shipped_bundles_source.ts";
import { renderConsoleAssets } from "./console_assets_source.ts";

const check = Deno.args.includes("--check");
const root = new URL("../", import.meta.url);
const outputs: [string, string][] = [
  ["docs/events.md", renderEventCatalog(CATALOG_EVENTS)],
  ["docs/config-catalog.md", renderConfigCatalog(CATALOG_PLUGINS)],
  ["docs/errors.md", renderErrorCatalog(CATALOG_ERRORS)],
  ["composition/_shipped_bundles_data.ts", await renderShippedBundles(new URL("bundles/", root))],
  [
    "interfaces/ws/_console_assets.ts",
    await renderConsoleAssets(new URL("interfaces/ws/console/", root)),
  ],
];

let drift = false;
for (const [path, text] of outputs) {
  const url = new URL(path, root);
  if (check) {
    const current = await Deno.readTextFile(url).catch(() => "");
    if (current !== text) {
      drift = true;
      console.error(`${path} is out of date: run \`deno task catalog\` and commit the result`);
    }
  } else {
    await Deno.writeTextFile(url, text);
    console.log(`wrote ${path}`);
  }
}
if (drift) Deno.exit(1);
