/**
 * `dump-config`: the resolved tree as YAML, each row annotated with the layers that set it, tags shown as tags
 * (so no secret is ever resolved or printed).
 *
 * @module
 */
import type { SourceRef } from "./config_files.ts";
import type { ResolvedProfile } from "./resolve.ts";
import { renderYaml, type YamlComment } from "./_yaml.ts";

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
    return {
      id: row.id,
      plugin: row.plugin,
      ...(row.disabled ? { disabled: true } : {}),
      ...(row.isolate === undefined ? {} : { isolate: row.isolate }),
      config: row.config,
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

function where(source: SourceRef): string {
  return `${source.layer} (${source.file}:${source.line})`;
}
