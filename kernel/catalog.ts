/**
 * Generated catalogs: `docs/events.md` from event declarations, `docs/config-catalog.md` from plugin config
 * schemas, and `docs/errors.md` from error code tables. CI regenerates them and fails when the committed files
 * drift.
 *
 * @module
 */
import { z } from "zod";
import type { EventDefinition } from "./event.ts";
import { configSchema } from "./config.ts";
import { type PluginLike, pluginName } from "./plugin.ts";
import type { ErrorCodes } from "./error_codes.ts";

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  additionalProperties?: boolean | JsonSchema;
};

/**
 * Renders the events catalog: one table per declaring package, sorted by name, with mode, durability and payload
 * shape.
 *
 * @param events every declared event (duplicates by identity are rendered once)
 * @returns Markdown text, stable for the same input
 */
export function renderEventCatalog(events: readonly EventDefinition[]): string {
  const unique = [...new Set(events)];
  const owners = [...new Set(unique.map((event) => event.owner ?? "(unowned)"))].sort();
  const lines = [
    "# Events",
    "",
    "Generated from the event declarations by `deno task catalog`; do not edit by hand. CI fails when this file",
    "drifts from the code.",
    "",
    "Modes: `emit` (fire-and-forget, failures isolated), `waterfall` (around-middleware with `next`), `parallel`",
    "(awaited fan-out), `serial` (awaited in order, first decisive result wins). Durable events are stored in the",
    "session log and are the wire vocabulary.",
  ];
  for (const owner of owners) {
    lines.push(
      "",
      `## ${owner}`,
      "",
      "| event | mode | durable | payload | description |",
      "|---|---|---|---|---|",
    );
    const owned = unique.filter((event) => (event.owner ?? "(unowned)") === owner)
      .sort((a, b) => a.name.localeCompare(b.name));
    for (const event of owned) {
      lines.push(
        `| \`${event.name}\` | ${event.mode} | ${event.durable ? "yes" : "no"} | ${
          cell(shape(toJsonSchema(event.payload)))
        } | ${cell(event.description)} |`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/**
 * Renders the config catalog: every plugin's keys with type, whether required, default and description.
 *
 * @param plugins every plugin that can appear in a row (duplicates by name are rendered once)
 * @returns Markdown text, stable for the same input
 */
export function renderConfigCatalog(plugins: readonly PluginLike[]): string {
  const byName = new Map<string, PluginLike>();
  for (const plugin of plugins) byName.set(pluginName(plugin), plugin);
  const lines = [
    "# Config catalog",
    "",
    "Generated from the plugins' config schemas by `deno task catalog`; do not edit by hand. A row's `config`",
    "is replaced wholesale by a patch, never deep-merged.",
  ];
  for (const name of [...byName.keys()].sort()) {
    const plugin = byName.get(name)!;
    const schema = configSchema(plugin);
    lines.push("", `## \`${name}\``, "");
    if (plugin.description !== undefined) lines.push(plugin.description, "");
    if (schema === undefined) {
      lines.push("Takes no config.");
      continue;
    }
    const json = toJsonSchema(schema);
    const props = Object.entries(json.properties ?? {});
    if (props.length === 0) {
      lines.push(`Config: ${cell(shape(json))}`);
      continue;
    }
    lines.push("| key | type | required | default | description |", "|---|---|---|---|---|");
    for (const [key, prop] of props) {
      const required = json.required?.includes(key) && prop.default === undefined ? "yes" : "no";
      const fallback = prop.default === undefined ? "" : `\`${JSON.stringify(prop.default)}\``;
      lines.push(
        `| \`${key}\` | ${cell(shape(prop))} | ${required} | ${cell(fallback)} | ${
          cell(prop.description ?? "")
        } |`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/**
 * Renders the error catalog: one table per declaring package, codes sorted, each with the condition it names and
 * the packages whose codes the table's guard also accepts.
 *
 * @param tables every declared error code table (duplicates by identity are rendered once)
 * @returns Markdown text, stable for the same input
 */
export function renderErrorCatalog(tables: readonly ErrorCodes<string>[]): string {
  const unique = [...new Set(tables)].sort((a, b) => a.owner.localeCompare(b.owner));
  const lines = [
    "# Error codes",
    "",
    "Generated from the packages' error code tables by `deno task catalog`; do not edit by hand. A `TerretError`",
    "carries one of these codes; each table's `is` guard accepts its own codes and those of the tables it builds",
    "on, and rejects any other code at compile time.",
  ];
  for (const table of unique) {
    lines.push("", `## ${table.owner}`, "");
    if (table.base.length > 0) {
      lines.push(`Builds on ${table.base.map((base) => base.owner).join(", ")}.`, "");
    }
    lines.push("| code | condition |", "|---|---|");
    const codes = Object.entries(table.codes as Readonly<Record<string, string>>)
      .sort(([a], [b]) => a.localeCompare(b));
    for (const [code, description] of codes) lines.push(`| \`${code}\` | ${cell(description)} |`);
  }
  return lines.join("\n") + "\n";
}

function toJsonSchema(schema: z.ZodType): JsonSchema {
  try {
    return z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as JsonSchema;
  } catch {
    return {};
  }
}

function shape(schema: JsonSchema, depth = 0): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) {
    return schema.enum.map((value) => JSON.stringify(value)).join(" \\| ");
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map((member) => shape(member, depth)).join(" \\| ");
  const type = Array.isArray(schema.type) ? schema.type.join(" \\| ") : schema.type;
  if (type === "array") return `${shape(schema.items ?? {}, depth)}[]`;
  if (type === "object" || schema.properties !== undefined) {
    if (depth > 1 || schema.properties === undefined) return "object";
    const fields = Object.entries(schema.properties).map(([key, prop]) =>
      `${key}${schema.required?.includes(key) ? "" : "?"}: ${shape(prop, depth + 1)}`
    );
    return `{${fields.join(", ")}}`;
  }
  return type ?? "unknown";
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\\\\|", "\\|").replaceAll("\n", " ");
}
