/**
 * Schema-marked secrets: a config field whose zod schema carries `.meta({ secret: true })` (see
 * {@linkcode secretField}) holds a secret, and so does a key named like one (`api_key`, `token`, `password`, …).
 * The `credentials` row feeds every such value to the redactor when its row mounts; `dump-config` masks them.
 *
 * @module
 */
import { globalRegistry, type z } from "zod";

/** The metadata that marks a schema's values secret. */
export const SECRET_META: Readonly<{ secret: true }> = Object.freeze({ secret: true });

/**
 * Marks a schema's values secret: every string found under it in a row's config is redacted from tool results and
 * the session log while the row lives, and masked by `dump-config`.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { isSecretSchema, secretField } from "@terret/core/redaction";
 * const schema = secretField(z.string().min(1));
 * console.log(isSecretSchema(schema)); // true
 * ```
 */
export function secretField<T extends z.ZodType>(schema: T): T {
  return schema.meta({ ...globalRegistry.get(schema), ...SECRET_META }) as T;
}

/** True when `schema` itself was marked with {@linkcode secretField}. */
export function isSecretSchema(schema: z.ZodType): boolean {
  return (globalRegistry.get(schema) as { secret?: unknown } | undefined)?.secret === true;
}

const SECRET_KEY =
  /(?:^|[_.-])(?:api[_-]?key|apikey|token|secret|password|passwd|passphrase|credential|private[_-]?key|authorization|bearer)$/i;

/**
 * True when a config key is named like a secret (`api_key`, `token`, `client_secret`, `password`, `Authorization`,
 * …); `token_env`, `token_file` and `api_key_env` name where a secret is, and are not. A string directly under
 * such a key (or a list of strings) is secret; an object under it is walked by its own keys.
 */
export function isSecretKeyName(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** One secret found in a config: where it is, and the value. */
export interface SecretValue {
  /** The path of keys and indexes leading to it. */
  readonly path: readonly (string | number)[];
  /** The string value. */
  readonly value: string;
}

/**
 * Every string value in `config` that `schema` marks secret (at any depth: an object, array or record under a
 * marked schema is secret whole) or that sits under a key named like a secret ({@linkcode isSecretKeyName}).
 * Unknown shapes are walked by value only; it never throws.
 */
export function secretValues(schema: z.ZodType | undefined, config: unknown): SecretValue[] {
  const out: SecretValue[] = [];
  walk(schema, config, [], false, out, 0);
  return out;
}

interface Def {
  readonly type?: string;
  readonly innerType?: z.ZodType;
  readonly shape?: Record<string, z.ZodType>;
  readonly element?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType | undefined): Def | undefined {
  return (schema as unknown as { _zod?: { def?: Def } } | undefined)?._zod?.def;
}

/** Unwraps optional, default, nullable, pipes and lazies, noting whether any layer was marked secret. */
function unwrap(schema: z.ZodType | undefined): { schema: z.ZodType | undefined; secret: boolean } {
  let secret = false;
  let current = schema;
  for (let hops = 0; current !== undefined && hops < 32; hops++) {
    if (isSecretSchema(current)) secret = true;
    const def = defOf(current);
    if (def?.innerType !== undefined) current = def.innerType;
    else if (def?.type === "pipe" && def.in !== undefined) current = def.in;
    else if (def?.type === "lazy" && def.getter !== undefined) current = def.getter();
    else break;
  }
  return { schema: current, secret };
}

function walk(
  schema: z.ZodType | undefined,
  value: unknown,
  path: (string | number)[],
  inherited: boolean,
  out: SecretValue[],
  depth: number,
): void {
  if (depth > 64) return;
  const { schema: inner, secret: marked } = unwrap(schema);
  const secret = inherited || marked;
  if (typeof value === "string") {
    if (secret) out.push({ path: [...path], value });
    return;
  }
  if (value === null || typeof value !== "object") return;
  // Only plain data is walked: a config tag (`!env NAME`) or any other object is not a value.
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return;
  const def = defOf(inner);
  if (Array.isArray(value)) {
    value.forEach((item, index) =>
      walk(def?.element, item, [...path, index], secret, out, depth + 1)
    );
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const child = def?.shape?.[key] ?? def?.valueType ?? unionMember(def, key);
    const named = isSecretKeyName(key) &&
      (typeof item === "string" ||
        (Array.isArray(item) && item.every((x) => typeof x === "string")));
    walk(child, item, [...path, key], secret || named, out, depth + 1);
  }
}

function unionMember(def: Def | undefined, key: string): z.ZodType | undefined {
  for (const option of def?.options ?? []) {
    const shape = defOf(unwrap(option).schema)?.shape;
    if (shape !== undefined && Object.hasOwn(shape, key)) return shape[key];
  }
  return undefined;
}
