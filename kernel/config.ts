/**
 * Config validation: every plugin declares its config as a zod schema, checked once at mount and on every
 * reconfigure.
 *
 * @module
 */
import type { z } from "zod";
import { TerretError } from "./hames_errors.ts";
import type { PluginLike } from "./plugin.ts";

/** One problem found in a config, with the path of the offending key. */
export interface ConfigIssue {
  /** Dotted path of the key inside the row's config (`""` for the whole config). */
  readonly path: string;
  /** What is wrong with it. */
  readonly message: string;
}

/** The schema a plugin declares for its config, if any. */
export function configSchema(plugin: PluginLike): z.ZodType | undefined {
  return plugin.config;
}

/**
 * Validates `config` against the plugin's schema and returns the parsed value (defaults applied). Plugins without
 * a schema receive the config unchanged.
 *
 * @throws {TerretError} `ConfigInvalid` whose `details.issues` lists every {@linkcode ConfigIssue}
 */
export function parseConfig(plugin: PluginLike, config: unknown, id: string): unknown {
  const schema = configSchema(plugin);
  if (schema === undefined) return config;
  const result = schema.safeParse(config);
  if (result.success) return result.data;
  const issues: ConfigIssue[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const summary = issues
    .map((issue) => `${issue.path === "" ? "config" : `config.${issue.path}`}: ${issue.message}`)
    .join("; ");
  throw new TerretError("ConfigInvalid", `Cannot configure "${id}": ${summary}`, {
    details: { id, issues },
  });
}
