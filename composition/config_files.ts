/**
 * The three config file shapes, read strictly: bundles (`name`, `plugins`, `rows`), profiles (`bundles`,
 * `plugins`, `settings`) and patches (`rows`, `settings`). An unknown key is refused, never ignored, and every
 * problem names the file, the line and the row.
 *
 * @module
 */
import { z } from "zod";
import { TerretError } from "./errors.ts";
import { collectTags } from "./config_tag.ts";
import { readYaml, type YamlFile } from "./_yaml.ts";

/** Where a value came from: the layer, the file and the line. */
export interface SourceRef {
  /** The layer that set it (`bundle base`, `profile patch`, `home patch`, `--patch`). */
  readonly layer: string;
  /** The file path. */
  readonly file: string;
  /** The 1-based line of the row (or value) in the file. */
  readonly line: number;
  /** The line of a key path inside the row's config (the row's line when the key is absent). */
  readonly locate: (configPath: readonly string[]) => number;
}

/** One row as written in a bundle or a patch, before layering. */
export interface RowSpec {
  /** The row id (`llm.main`). */
  readonly id: string;
  /** The plugin name, when the row sets it. */
  readonly plugin?: string;
  /** True when the row sets `config` (even to `null`). */
  readonly hasConfig: boolean;
  /** The config as written (tags unresolved). */
  readonly config?: unknown;
  /** `disabled`, when the row sets it. */
  readonly disabled?: boolean;
  /** Keys the row's subtree isolates. */
  readonly isolate?: readonly string[];
  /** Insert before this row id (new rows only). */
  readonly before?: string;
  /** Insert after this row id (new rows only). */
  readonly after?: string;
  /** Where the row is written. */
  readonly source: SourceRef;
}

/** A bundle file: named plugin modules plus ordered rows. */
export interface BundleFile {
  /** The bundle name (the file name without `.yml` when not set). */
  readonly name: string;
  /** One line saying what the bundle carries. */
  readonly description?: string;
  /** Plugin name → module specifier, relative to the bundle file (`./fortune.ts#fortune`). */
  readonly plugins: Readonly<Record<string, string>>;
  /** The rows, in order. */
  readonly rows: readonly RowSpec[];
}

/** A profile file: the bundles it stacks, plugins it adds, and settings for `!setting`. */
export interface ProfileFile {
  /** One line saying what the profile is for. */
  readonly description?: string;
  /** Bundle names, package names or (with consent) paths, stacked in order. */
  readonly bundles: readonly string[];
  /** Plugin name → module specifier; a path or URL needs `--allow-config-code`. */
  readonly plugins: Readonly<Record<string, string>>;
  /** Settings, by top-level key. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The line of each top-level settings key and of each plugin entry. */
  readonly lines: { settings(key: string): number; plugin(name: string): number };
}

/** A patch file: rows that replace or insert by id, and settings that replace by top-level key. */
export interface PatchFile {
  /** The rows, in order. */
  readonly rows: readonly RowSpec[];
  /** Settings, by top-level key. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The line of each top-level settings key. */
  readonly settingsLine: (key: string) => number;
}

/** Row ids: a letter or digit, then letters, digits, `_`, `.` or `-`. */
export const ROW_ID: RegExp = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

const RowShape = z.strictObject({
  id: z.string().regex(ROW_ID, "must start with a letter or digit and use only [A-Za-z0-9_.-]"),
  plugin: z.string().min(1).optional(),
  config: z.unknown().optional(),
  disabled: z.boolean().optional(),
  isolate: z.array(z.string().min(1)).optional(),
  before: z.string().min(1).optional(),
  after: z.string().min(1).optional(),
});
const Specifiers = z.record(z.string().min(1), z.string().min(1));
const Settings = z.record(z.string(), z.unknown());
const BundleShape = z.strictObject({
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  plugins: Specifiers.optional(),
  rows: z.array(z.unknown()).optional(),
});
const ProfileShape = z.strictObject({
  description: z.string().optional(),
  bundles: z.array(z.string().min(1)).min(1),
  plugins: Specifiers.optional(),
  settings: Settings.optional(),
});
const PatchShape = z.strictObject({
  rows: z.array(z.unknown()).optional(),
  settings: Settings.optional(),
});

/**
 * Parses a bundle file.
 *
 * @param layer the layer name rows are attributed to (`bundle base`)
 * @throws {TerretError} `ConfigSyntax` or `ConfigShape` naming the file, line, row and key
 */
export function parseBundle(text: string, file: string, layer: string): BundleFile {
  const yaml = readYaml(text, file);
  const top = checkTop(yaml, BundleShape, "bundle", "name, description, plugins, rows");
  const fallback = file.split("/").pop()!.replace(/\.ya?ml$/, "");
  return {
    name: top.name ?? fallback,
    ...(top.description === undefined ? {} : { description: top.description }),
    plugins: top.plugins ?? {},
    rows: parseRows(yaml, top.rows ?? [], layer, "bundle"),
  };
}

/**
 * Parses a profile file.
 *
 * @throws {TerretError} `ConfigSyntax` or `ConfigShape` naming the file, line and key
 */
export function parseProfile(text: string, file: string): ProfileFile {
  const yaml = readYaml(text, file);
  const top = checkTop(yaml, ProfileShape, "profile", "description, bundles, plugins, settings");
  return {
    ...(top.description === undefined ? {} : { description: top.description }),
    bundles: top.bundles,
    plugins: top.plugins ?? {},
    settings: top.settings ?? {},
    lines: {
      settings: (key) => yaml.line(["settings", key]),
      plugin: (name) => yaml.line(["plugins", name]),
    },
  };
}

/**
 * Parses a patch file.
 *
 * @param layer the layer name (`profile patch`, `home patch`, `--patch`)
 * @throws {TerretError} `ConfigSyntax` or `ConfigShape` naming the file, line, row and key
 */
export function parsePatch(text: string, file: string, layer: string): PatchFile {
  const yaml = readYaml(text, file);
  if (yaml.value === null || yaml.value === undefined) {
    return { rows: [], settings: {}, settingsLine: () => 1 };
  }
  const top = checkTop(yaml, PatchShape, "patch", "rows, settings");
  return {
    rows: parseRows(yaml, top.rows ?? [], layer, "patch"),
    settings: top.settings ?? {},
    settingsLine: (key) => yaml.line(["settings", key]),
  };
}

function checkTop<T>(yaml: YamlFile, shape: z.ZodType<T>, kind: string, keys: string): T {
  const value = yaml.value ?? {};
  const misplaced = collectTags(value).find(({ key }) =>
    !/^(settings\.|rows\.\d+\.config(\.|$))/.test(key)
  );
  if (misplaced !== undefined) {
    throw shapeError(
      kind,
      yaml,
      misplaced.key.split("."),
      `"${misplaced.tag}" at "${misplaced.key}": tags are only allowed inside a row's config and in settings`,
    );
  }
  const result = shape.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String);
  const detail = issue.code === "unrecognized_keys"
    ? `unknown key "${issue.keys[0]}"${path.length === 0 ? ` (expected ${keys})` : ""}`
    : issue.message.replace(/^Invalid input: /, "");
  throw shapeError(kind, yaml, path, path.length === 0 ? detail : `"${path.join(".")}": ${detail}`);
}

function parseRows(
  yaml: YamlFile,
  rows: readonly unknown[],
  layer: string,
  kind: string,
): RowSpec[] {
  const seen = new Map<string, number>();
  rows.forEach((raw, index) => {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id !== "string") return;
    const first = seen.get(id);
    if (first !== undefined) {
      throw shapeError(
        kind,
        yaml,
        ["rows", index],
        `row "${id}" appears twice in this file (first at line ${
          yaml.line(["rows", first])
        }); give each row id once per file`,
      );
    }
    seen.set(id, index);
  });
  return rows.map((raw, index) => {
    const result = RowShape.safeParse(raw);
    const where = typeof (raw as { id?: unknown })?.id === "string"
      ? `row "${(raw as { id: string }).id}"`
      : `row ${index + 1}`;
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const key = issue.path.map(String).join(".");
      const detail = issue.code === "unrecognized_keys"
        ? `unknown key "${
          issue.keys[0]
        }" (expected id, plugin, config, disabled, isolate, before, after)`
        : `key "${key}" ${issue.message.replace(/^Invalid input: /, "")}`;
      throw shapeError(
        kind,
        yaml,
        ["rows", index, ...issue.path.map(String)],
        `${where}: ${detail}`,
      );
    }
    const row = result.data;
    if (row.before !== undefined && row.after !== undefined) {
      throw shapeError(kind, yaml, ["rows", index], `${where}: give "before" or "after", not both`);
    }
    const locate = (configPath: readonly string[]): number =>
      yaml.line(["rows", index, "config", ...configPath]);
    const source: SourceRef = { layer, file: yaml.file, line: yaml.line(["rows", index]), locate };
    const hasConfig = typeof raw === "object" && raw !== null && "config" in raw;
    return {
      id: row.id,
      ...(row.plugin === undefined ? {} : { plugin: row.plugin }),
      hasConfig,
      ...(hasConfig ? { config: row.config ?? {} } : {}),
      ...(row.disabled === undefined ? {} : { disabled: row.disabled }),
      ...(row.isolate === undefined ? {} : { isolate: row.isolate }),
      ...(row.before === undefined ? {} : { before: row.before }),
      ...(row.after === undefined ? {} : { after: row.after }),
      source,
    };
  });
}

function shapeError(
  kind: string,
  yaml: YamlFile,
  path: readonly (string | number)[],
  detail: string,
): TerretError {
  const line = yaml.line(path.map((part) => /^\d+$/.test(String(part)) ? Number(part) : part));
  return new TerretError(
    "ConfigShape",
    `Cannot read ${kind} "${yaml.file}": line ${line}: ${detail}`,
    {
      details: { file: yaml.file, line },
    },
  );
}
