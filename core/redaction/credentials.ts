/**
 * The `credentials` row: the one door for secrets. Provider secrets resolve environment-first, then from the
 * encrypted store; every secret the host holds (resolved values, schema-marked config values of every row, values
 * rows register) is fed to the log's scrubber and to tool-result redaction, so it never becomes durable.
 *
 * @module
 */
import {
  configSchema,
  ConfigUpdated,
  type Context,
  definePlugin,
  defineService,
  type Disposer,
  type HostPermissions,
  type Loader,
  LoaderKey,
  type Plugin,
  type ServiceKey,
} from "@terret/hames";
import { z } from "zod";
import { SessionsKey } from "../sessions/sessions.ts";
import { ToolsPostExecute } from "../tools/events.ts";
import type { ToolContent } from "../tools/tool.ts";
import { redactionToken } from "./redaction_plugin.ts";
import { CREDENTIALS_KEY_ENV, CredentialStore } from "./credential_store.ts";
import { secretField, secretValues } from "./secret_fields.ts";
import { safePrefixLength } from "./safe_prefix.ts";

/**
 * Provider secrets and every other secret the host holds (service key `credentials`): the one door through which
 * rows read secrets.
 *
 * Contract: `resolve(name)` reads the provider's environment variables in order and returns the first one set and
 * non-empty (the environment always wins), else the value in the encrypted store, else the row's configured
 * `value`, else `undefined`; it never throws for an unknown name. `env(variable)` reads one variable through the
 * door. `addSecret(owner, value)` registers a secret a row holds (a generated token, a header) for as long as
 * `owner` lives. Every value it has ever returned or been given, every schema-marked secret in any mounted row's
 * config (see `secretField`), and every value found at mount is replaced by the redaction token in tool results and
 * at the log's append boundary for as long as the row lives. Values shorter than 4 characters are not registered
 * (they would redact prose).
 */
export interface Credentials {
  /** The secret of a provider (`"openrouter"`), or `undefined`. */
  resolve(name: string): string | undefined;
  /** The value of an environment variable holding a secret (empty counts as unset), registered as one. */
  env(variable: string): string | undefined;
  /** Registers a secret the host holds for as long as `owner` lives. */
  addSecret(owner: Context, value: string): Disposer;
  /** The configured provider names, sorted. */
  names(): string[];
}

/** The credentials service key (config row `credentials`). */
export const CredentialsKey: ServiceKey<Credentials> = defineService<Credentials>(
  "credentials",
  "The one door for secrets: provider keys environment-first, then the encrypted store; every secret is redacted",
);

/** Where one provider's secret comes from. */
export interface CredentialSource {
  /** Environment variables, in order; the first one set and non-empty wins. */
  readonly env: readonly string[];
  /** The fallback when no variable is set and the store has none (plain text in config: prefer the environment). */
  readonly value?: string | undefined;
}

/** Config of the `credentials` row. */
export interface CredentialsConfig {
  /** Providers by name. */
  readonly providers: Readonly<Record<string, CredentialSource>>;
  /** The encrypted store file (relative to `dir`); absent: no store. */
  readonly store?: string | undefined;
  /** The directory a relative `store` path is resolved against. */
  readonly dir?: string | undefined;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The `credentials` row's config schema. */
export const credentialsConfig: z.ZodType<CredentialsConfig> = z.object({
  providers: z.record(
    z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
    z.object({
      env: z.array(z.string().regex(ENV_NAME)).default([]),
      value: secretField(z.string().min(4)).optional(),
    }).strict(),
  ).default({ openrouter: { env: ["OPENROUTER_API_KEY"] } }).describe(
    "Providers by name: `env` variables read in order (the environment wins), then the encrypted store, then an " +
      "optional plain-text `value`. Every resolved value is redacted from tool results and the session log",
  ),
  store: z.string().min(1).optional().describe(
    "The encrypted credential store (AES-256-GCM, key in TERRET_CREDENTIALS_KEY, mode 0600; `trt credentials " +
      "set|list|delete` edits it). A store present without its key is refused: the row fails to start",
  ),
  dir: z.string().min(1).optional().describe(
    "The directory a relative store path is resolved against; the base bundle passes the Terret home",
  ),
}).strict() as z.ZodType<CredentialsConfig>;

/** The store file a config names: `store`, resolved against `dir` when relative; `undefined` without one. */
export function credentialStorePath(
  config: Pick<CredentialsConfig, "store" | "dir">,
): string | undefined {
  if (config.store === undefined) return undefined;
  if (config.store.startsWith("/") || config.dir === undefined) return config.store;
  return `${config.dir.replace(/\/+$/, "")}/${config.store}`;
}

/**
 * Provides `credentials`. At mount it opens the encrypted store (refusing one present without its key), resolves
 * every configured provider, and registers each value it ever resolves, every value given to `addSecret`, and
 * every schema-marked secret of every row the loader mounts (read again when a row is added or reconfigured) as a
 * literal secret: replaced by the redaction token (the `redaction` row's, else the default) in tool results
 * (`tools/post_execute`) and, once `sessions` exists, by a scrubber at the log's append boundary.
 *
 * **Permissions**: the environment variables it names and `TERRET_CREDENTIALS_KEY`; read and write of the store's
 * directory when a store is configured.
 */
export const credentialsPlugin: Plugin<CredentialsConfig> = definePlugin({
  name: "terret-credentials",
  description:
    "The one door for secrets: provider keys environment-first, then an encrypted store; every secret the host " +
    "holds is redacted from tool results and the log",
  provides: [CredentialsKey],
  config: credentialsConfig,
  permissions(config): HostPermissions {
    const names = Object.values(config.providers).flatMap((source) => source.env);
    const store = credentialStorePath(config);
    if (store === undefined) {
      return names.length === 0 ? {} : { env: [...new Set(names)].sort() };
    }
    const dir = store.slice(0, Math.max(store.lastIndexOf("/"), 1));
    return {
      env: [...new Set([...names, CREDENTIALS_KEY_ENV])].sort(),
      read: [dir],
      write: [dir],
    };
  },
  async apply(ctx, config) {
    // Everything a row needs is provided before the first await: rows mounted after this one (the model
    // adapters, the socket) find the service when they start, whatever order the loader settles them in.
    const secrets = new SecretSet();
    const opened: { store?: CredentialStore | undefined } = {};
    const readEnv = (variable: string): string | undefined => {
      const value = Deno.env.get(variable);
      return value === undefined || value === "" ? undefined : secrets.add(value);
    };
    const resolve = (name: string): string | undefined => {
      const source = Object.hasOwn(config.providers, name) ? config.providers[name] : undefined;
      for (const variable of source?.env ?? []) {
        const value = readEnv(variable);
        if (value !== undefined) return value;
      }
      const stored = opened.store?.get(name);
      if (stored !== undefined) return secrets.add(stored);
      return source?.value === undefined ? undefined : secrets.add(source.value);
    };
    for (const name of Object.keys(config.providers)) resolve(name);
    const rows = new RowSecrets(ctx.maybe(LoaderKey), secrets);
    ctx.on(ConfigUpdated, () => rows.invalidate());
    const token = (): string => redactionToken(ctx);
    const scrub = (text: string): string => {
      rows.sync();
      return secrets.replace(text, token);
    };
    ctx.on(
      ToolsPostExecute,
      (completion, next) =>
        next({ ...completion, content: scrubContent(completion.content, scrub) }),
    );
    ctx.plugin(definePlugin({
      name: "terret-credentials-scrubber",
      inject: [SessionsKey],
      apply(scope: Context) {
        // It writes the token in force at each scrub; it declares the one in force now as its marker, and a
        // redaction row declares its own token, so the loop's resume recognises whichever was written.
        // Streamed text is held back only where a suffix could start a secret, so a reply still streams.
        scope.get(SessionsKey).registerScrubber(scope, scrub, {
          marker: redactionToken(scope),
          safePrefix: (text) => {
            rows.sync();
            return secrets.safePrefix(text);
          },
        });
      },
    }));
    ctx.provide(CredentialsKey, {
      resolve,
      env: readEnv,
      addSecret: (owner, value) => owner.effect(() => secrets.hold(value), "credentials: secret"),
      names: () =>
        [...new Set([...Object.keys(config.providers), ...(opened.store?.names() ?? [])])].sort(),
    });
    // A store present without its key (or that the key does not open) fails the row, and with it the boot.
    const storePath = credentialStorePath(config);
    if (storePath === undefined) return;
    opened.store = await openStoreIfPresent(storePath, Deno.env.get(CREDENTIALS_KEY_ENV));
    for (const name of opened.store?.names() ?? []) resolve(name);
  },
});

async function openStoreIfPresent(
  path: string,
  key: string | undefined,
): Promise<CredentialStore | undefined> {
  const present = await Deno.lstat(path).then(() => true, (error) => {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  });
  if (!present && (key === undefined || key === "")) return undefined;
  return await CredentialStore.open(path, key);
}

/** The shortest schema-marked config value registered as a secret. */
const MIN_CONFIG_SECRET = 8;

/** The schema-marked secrets of the loader's rows, read again when a row is added or reconfigured. */
class RowSecrets {
  readonly #loader: Loader | undefined;
  readonly #secrets: SecretSet;
  #seen = -1;

  constructor(loader: Loader | undefined, secrets: SecretSet) {
    this.#loader = loader;
    this.#secrets = secrets;
  }

  invalidate(): void {
    this.#seen = -1;
  }

  sync(): void {
    if (this.#loader === undefined || this.#loader.size === this.#seen) return;
    const rows = this.#loader.rows();
    this.#seen = rows.length;
    for (const row of rows) {
      if (row.disabled === true) continue;
      for (const found of secretValues(configSchema(row.plugin), row.config)) {
        // A short config value ("true", a port) would redact prose; a secret that short is no secret.
        if (found.value.length >= MIN_CONFIG_SECRET) this.#secrets.add(found.value);
      }
    }
  }
}

/** The secret values seen so far, replaced longest first. */
class SecretSet {
  readonly #values = new Set<string>();
  readonly #held = new Map<string, number>();
  #pattern: RegExp | undefined;

  /** Registers `value` for good (a value the row resolved). */
  add(value: string): string {
    if (value.length >= 4 && !this.#values.has(value)) {
      this.#values.add(value);
      this.#pattern = undefined;
    }
    return value;
  }

  /** Registers `value` until the returned teardown runs (unless it is also registered for good). */
  hold(value: string): () => void {
    if (value.length < 4) return () => {};
    this.#held.set(value, (this.#held.get(value) ?? 0) + 1);
    this.#pattern = undefined;
    return () => {
      const count = (this.#held.get(value) ?? 1) - 1;
      if (count <= 0) this.#held.delete(value);
      else this.#held.set(value, count);
      this.#pattern = undefined;
    };
  }

  /**
   * The length of the longest prefix of `text` (streamed, not appended yet) that cuts no secret in two: a suffix
   * that may start a secret, and a secret reaching the end, are held back.
   */
  safePrefix(text: string): number {
    if (this.#values.size === 0 && this.#held.size === 0) return text.length;
    return safePrefixLength(text, {
      literals: [...new Set([...this.#values, ...this.#held.keys()])],
      patterns: [],
      markers: [],
      window: 0,
    });
  }

  /** `text` with every secret replaced by `token()` (asked only when there is one). */
  replace(text: string, token: () => string): string {
    if (this.#values.size === 0 && this.#held.size === 0) return text;
    const pattern = this.#regex();
    // Text without a secret (nearly all of it) is returned as it came, after one test.
    pattern.lastIndex = 0;
    if (!pattern.test(text)) return text;
    pattern.lastIndex = 0;
    const replacement = token();
    return text.replace(pattern, () => replacement);
  }

  #regex(): RegExp {
    return this.#pattern ??= new RegExp(
      [...new Set([...this.#values, ...this.#held.keys()])].sort((a, b) => b.length - a.length).map(
        escapeRegExp,
      ).join("|"),
      "g",
    );
  }
}

function scrubContent(content: ToolContent, scrub: (text: string) => string): ToolContent {
  if (typeof content === "string") return scrub(content);
  return content.map((part) =>
    part.type === "text" ? { type: "text" as const, text: scrub(part.text) } : part
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
