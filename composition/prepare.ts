/**
 * Row preparation, the step between resolution and the loader: load each enabled row's plugin, materialise its
 * tags, and validate its config against the plugin's schema, turning any failure into one message naming the
 * file, the line, the row, the key and the layer that set it.
 *
 * @module
 */
import { isTerretError, parseConfig, type PluginLike, type Row } from "@terret/hames";
import { TerretError } from "./errors.ts";
import { ConfigTag, type EnvReader, materialise, type TagScope } from "./config_tag.ts";
import type { ComposedRow } from "./layers.ts";
import { loadPlugin } from "./plugin_source.ts";
import type { ResolvedProfile } from "./resolve.ts";

/** An enabled row ready for the loader. */
export interface PreparedRow {
  /** The composed row it came from (provenance, raw config). */
  readonly composed: ComposedRow;
  /** The plugin code. */
  readonly plugin: PluginLike;
  /** The config with tags materialised, as the loader receives it. */
  readonly config: unknown;
  /** The config as the plugin's schema parses it (defaults applied). */
  readonly parsed: unknown;
  /** Environment variables the row's tags read. */
  readonly envRead: readonly string[];
}

/** Options for {@linkcode prepareRows}. */
export interface PrepareOptions {
  /** The environment `!env` reads (default `Deno.env`). */
  readonly env?: EnvReader;
  /** Consent to import plugins named by path or URL in config. */
  readonly allowConfigCode?: boolean;
}

/**
 * Prepares every enabled row, in order; plugins are loaded once each.
 *
 * @throws {TerretError} the first row's failure: `PluginUnknown`, `ConfigCodeRefused`, `PluginLoadFailed`,
 *   `TagUnresolved` or `ConfigInvalid`
 */
export async function prepareRows(
  resolved: ResolvedProfile,
  options: PrepareOptions = {},
): Promise<PreparedRow[]> {
  const cache = new Map<string, Promise<PluginLike>>();
  const prepared: PreparedRow[] = [];
  for (const row of resolved.rows) {
    if (row.disabled) continue;
    prepared.push(await prepareRow(resolved, row, options, cache));
  }
  return prepared;
}

/**
 * Prepares one row (enabled or not): the unit doctor runs per row to report every problem.
 *
 * @param cache plugin loads shared across rows
 */
export async function prepareRow(
  resolved: ResolvedProfile,
  row: ComposedRow,
  options: PrepareOptions,
  cache: Map<string, Promise<PluginLike>> = new Map(),
): Promise<PreparedRow> {
  const source = resolved.plugins.get(row.plugin);
  if (source === undefined) {
    const known = [...resolved.plugins.keys()].sort().join(", ") || "none";
    throw new TerretError(
      "PluginUnknown",
      `Cannot configure row "${row.id}" (plugin set by ${
        origin(row.pluginBy)
      }): unknown plugin "${row.plugin}" (no built-in, bundle or profile declares it; known: ${known})`,
      { details: { row: row.id, plugin: row.plugin } },
    );
  }
  let loading = cache.get(row.plugin);
  if (loading === undefined) {
    loading = loadPlugin(source, options.allowConfigCode ?? false);
    cache.set(row.plugin, loading);
  }
  const plugin = await loading;
  const envRead: string[] = [];
  const env = options.env ?? Deno.env;
  const scope: TagScope = {
    env: {
      get(name) {
        envRead.push(name);
        return env.get(name);
      },
    },
    setting: (path) => lookupSetting(resolved, path),
  };
  const config = materialise(row.config, scope, {
    row: row.id,
    key: "config",
    origin: origin(row.configBy),
  });
  let parsed: unknown;
  try {
    parsed = parseConfig(plugin, config, row.id);
  } catch (error) {
    if (!isTerretError(error, "ConfigInvalid")) throw error;
    throw configInvalid(row, error);
  }
  return { composed: row, plugin, config, parsed, envRead: [...new Set(envRead)] };
}

/** The loader rows for prepared rows. */
export function loaderRows(prepared: readonly PreparedRow[]): Row[] {
  return prepared.map((row) => ({
    id: row.composed.id,
    plugin: row.plugin,
    config: row.config,
    ...(row.composed.isolate === undefined ? {} : { isolate: row.composed.isolate }),
  }));
}

/** `layer "file" line N`, for messages. */
export function origin(source: { layer: string; file: string; line: number }): string {
  return `${source.layer} "${source.file}" line ${source.line}`;
}

function lookupSetting(
  resolved: ResolvedProfile,
  path: string,
): { found: true; value: unknown } | { found: false } {
  const [top, ...rest] = path.split(".");
  const entry = resolved.settings.get(top!);
  if (entry === undefined) {
    // Built-in settings, unless the profile defines the key: `terret.home`, the Terret home in use.
    if (top === "terret" && rest.length === 1 && rest[0] === "home") {
      return { found: true, value: resolved.home };
    }
    return { found: false };
  }
  let value: unknown = entry.value;
  for (const key of rest) {
    if (
      typeof value !== "object" || value === null || value instanceof ConfigTag ||
      !Object.hasOwn(value, key)
    ) return { found: false };
    value = (value as Record<string, unknown>)[key];
  }
  return { found: true, value };
}

function configInvalid(row: ComposedRow, error: TerretError): TerretError {
  const issues = (error.details?.issues ?? []) as { path: string; message: string }[];
  const first = issues[0];
  const line = row.configBy.locate(
    first === undefined || first.path === "" ? [] : first.path.split("."),
  );
  const summary = issues
    .map((issue) =>
      `${issue.path === "" ? "config" : `config.${issue.path}`}: ${
        issue.message.replace(/^Invalid input: /, "")
      }`
    )
    .join("; ");
  return new TerretError(
    "ConfigInvalid",
    `Cannot configure row "${row.id}" (config set by ${row.configBy.layer} "${row.configBy.file}" line ${line}): ${summary}`,
    {
      details: {
        row: row.id,
        file: row.configBy.file,
        line,
        layer: row.configBy.layer,
        issues,
      },
    },
  );
}
