/**
 * Config tags: `!env NAME` and `!setting key.path`, dynamic values kept as tags through resolution and dumping,
 * and materialised only at boot.
 *
 * @module
 */
import { TerretError } from "./errors.ts";

/** The tag kinds a config may use. Any other tag is refused when the file is read. */
export type ConfigTagKind = "env" | "setting";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SETTING_PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * A tagged scalar from a config file: `!env OPENROUTER_API_KEY` or `!setting sandbox.image`. Immutable; rendered
 * back as its tag by `dump-config`, so a secret's value is never printed.
 */
export class ConfigTag {
  /** Which tag it is. */
  readonly kind: ConfigTagKind;
  /** The variable name (`env`) or the dotted settings path (`setting`). */
  readonly name: string;

  /**
   * @throws {TypeError} when `name` is not a valid variable name or settings path
   */
  constructor(kind: ConfigTagKind, name: string) {
    const valid = kind === "env" ? ENV_NAME.test(name) : SETTING_PATH.test(name);
    if (!valid) {
      throw new TypeError(
        kind === "env"
          ? `Cannot read tag "!env ${name}": expected an environment variable name`
          : `Cannot read tag "!setting ${name}": expected a dotted settings path like "sandbox.image"`,
      );
    }
    this.kind = kind;
    this.name = name;
    Object.freeze(this);
  }

  /** The tag as written in YAML, e.g. `!env OPENROUTER_API_KEY`. */
  toString(): string {
    return `!${this.kind} ${this.name}`;
  }

  /** JSON form used by machine-readable dumps: `{"$tag": "!env OPENROUTER_API_KEY"}`. */
  toJSON(): { $tag: string } {
    return { $tag: this.toString() };
  }
}

/** Reads environment variables; the CLI injects it so tests never touch the real environment. */
export interface EnvReader {
  /** The variable's value, or `undefined` when it is not set. */
  get(name: string): string | undefined;
}

/** Where a tag sits, for error messages. */
export interface TagSite {
  /** The row id, or `undefined` for a tag inside `settings`. */
  readonly row?: string;
  /** Dotted path of the key holding the tag (`config.api_key`, `settings.llm.model`). */
  readonly key: string;
  /** `file:line` and the layer that set the value, e.g. `home patch /h/patch.yml:4`. */
  readonly origin: string;
}

/** What tags resolve against at boot. */
export interface TagScope {
  /** The environment `!env` reads. */
  readonly env: EnvReader;
  /** Looks up a settings path; `undefined` when no such setting exists. */
  setting(path: string): { found: true; value: unknown } | { found: false };
}

/**
 * Returns a deep copy of `value` with every {@linkcode ConfigTag} replaced by its value.
 *
 * @param site where `value` sits (its `key` is the path prefix for nested keys)
 * @throws {TerretError} `TagUnresolved` naming the row, the key, the origin and the tag
 */
export function materialise(value: unknown, scope: TagScope, site: TagSite): unknown {
  if (value instanceof ConfigTag) return resolveTag(value, scope, site);
  if (Array.isArray(value)) {
    return value.map((item, index) => materialise(item, scope, at(site, String(index))));
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = materialise(item, scope, at(site, key));
    }
    return out;
  }
  return value;
}

/** Every tag inside `value`, depth first, with its dotted key path relative to `value`. */
export function collectTags(value: unknown, prefix = ""): { key: string; tag: ConfigTag }[] {
  if (value instanceof ConfigTag) return [{ key: prefix, tag: value }];
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : isPlainObject(value)
    ? Object.entries(value)
    : [];
  return entries.flatMap(([key, item]) =>
    collectTags(item, prefix === "" ? key : `${prefix}.${key}`)
  );
}

function resolveTag(tag: ConfigTag, scope: TagScope, site: TagSite): unknown {
  const where = `${
    site.row === undefined ? "" : `row "${site.row}" `
  }key "${site.key}" (${site.origin})`;
  if (tag.kind === "env") {
    const value = scope.env.get(tag.name);
    if (value !== undefined) return value;
    throw unresolved(`Cannot resolve "${tag}" at ${where}: the variable is not set`, tag, site);
  }
  const found = scope.setting(tag.name);
  if (!found.found) {
    throw unresolved(`Cannot resolve "${tag}" at ${where}: no such setting`, tag, site);
  }
  if (found.value instanceof ConfigTag && found.value.kind === "setting") {
    throw unresolved(
      `Cannot resolve "${tag}" at ${where}: a setting may not refer to another setting`,
      tag,
      site,
    );
  }
  return materialise(found.value, scope, { key: `settings.${tag.name}`, origin: site.origin });
}

function unresolved(message: string, tag: ConfigTag, site: TagSite): TerretError {
  return new TerretError("TagUnresolved", message, {
    details: { tag: tag.toString(), row: site.row, key: site.key, origin: site.origin },
  });
}

function at(site: TagSite, key: string): TagSite {
  return { ...site, key: `${site.key}.${key}` };
}

/** True for an object literal or a null-prototype record (not a class instance, array or tag). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
