/**
 * `dump-config`: the resolved tree as YAML, each row annotated with the layers that set it, tags shown as tags
 * (so no secret is ever resolved), and every literal secret masked: a value a built-in plugin's schema marks
 * secret, or a value under a key named like a secret (`api_key`, `token`, `password`, …), is printed as
 * `-SECRET- (set by <layer> (<file>:<line>))`.
 *
 * @module
 */
import type { SourceRef } from "./config_files.ts";
import type { ResolvedProfile } from "./resolve.ts";
import { renderYaml, type YamlComment } from "./_yaml.ts";
import { configSchema } from "@terret/hames";
import { secretValues } from "@terret/core/redaction";
import type { z } from "zod";

/**
 * Renders a resolved profile.
 *
 * @returns YAML text: a header listing the profile and its layers, then `settings` and `rows`
 */
export function dumpConfig(resolved: ResolvedProfile): string {
  const header = [
    `trt dump-config: profile "${resolved.profile.name}" (${resolved.profile.file}${
      resolved.profile.template ? ", the shipped template" : ""
    })`,
    "layers, in order:",
    ...resolved.layers.map((layer, index) => `  ${index + 1}. ${layer.name}: ${layer.file}`),
    "tags are shown as written; they are resolved only at boot",
  ].join("\n");
  const comments: YamlComment[] = [];
  const settings: Record<string, unknown> = {};
  const settingNotes: string[] = [];
  for (const [key, entry] of resolved.settings) {
    settings[key] = entry.value;
    settingNotes.push(`${key}: set by ${entry.layer} (${entry.file}:${entry.line})`);
  }
  const rows = resolved.rows.map((row, index) => {
    const notes = [`set by ${where(row.setBy)}`];
    if (row.configBy !== row.setBy) notes.push(`config by ${where(row.configBy)}`);
    if (row.pluginBy !== row.setBy) notes.push(`plugin by ${where(row.pluginBy)}`);
    if (row.disabledBy !== undefined && row.disabledBy !== row.setBy) {
      notes.push(`disabled by ${where(row.disabledBy)}`);
    }
    comments.push({ path: ["rows", index], text: `${row.id}: ${notes.join("; ")}` });
    const builtin = resolved.plugins.get(row.plugin)?.builtin;
    const schema = builtin === undefined ? undefined : configSchema(builtin);
    return {
      id: row.id,
      plugin: row.plugin,
      ...(row.disabled ? { disabled: true } : {}),
      ...(row.isolate === undefined ? {} : { isolate: row.isolate }),
      config: maskSecrets(row.config, schema, `-SECRET- (set by ${where(row.configBy)})`),
    };
  });
  const tree: Record<string, unknown> = {};
  if (settingNotes.length > 0) {
    tree.settings = settings;
    comments.push({ path: ["settings"], text: settingNotes.join("\n") });
  }
  tree.rows = rows;
  return renderYaml(tree, header, comments);
}

/**
 * `config` with every literal secret replaced by `marker`: each string a schema marks secret and each string under
 * a key named like a secret. Tags stay as written (they are not values).
 */
function maskSecrets(config: unknown, schema: z.ZodType | undefined, marker: string): unknown {
  let out = config;
  for (const found of secretValues(schema, config)) out = setAt(out, found.path, marker);
  return out;
}

/** A copy of `value` with the leaf at `path` replaced, copying only the containers on the path. */
function setAt(value: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    copy[head as number] = setAt(copy[head as number], rest, leaf);
    return copy;
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head!]: setAt(record[head as string], rest, leaf) };
}

function where(source: SourceRef): string {
  return `${source.layer} (${source.file}:${source.line})`;
}
