/**
 * The `credentials` row: provider secrets resolved environment-first, every resolved value fed to the log's
 * scrubber and to tool-result redaction, so a credential the harness holds never becomes durable.
 *
 * @module
 */
import {
  type Context,
  definePlugin,
  defineService,
  type HostPermissions,
  type Plugin,
  type ServiceKey,
} from "@terret/hames";
import { z } from "zod";
import { SessionsKey } from "../sessions/sessions.ts";
import { ToolsPostExecute } from "../tools/events.ts";
import type { ToolContent } from "../tools/tool.ts";
import { redactionToken } from "./redaction_plugin.ts";

/**
 * Provider secrets (service key `credentials`).
 *
 * Contract: `resolve(name)` reads the provider's environment variables in order and returns the first one set and
 * non-empty (the environment always wins), else the row's configured `value`, else `undefined`; it never throws
 * for an unknown name (`undefined`). Every value it has ever returned, and every value found at mount, is
 * replaced by the redaction token in tool results and at the log's append boundary for as long as the row lives.
 * It keeps no store of its own: an encrypted on-disk store and an OS keychain are future work.
 */
export interface Credentials {
  /** The secret of a provider (`"openrouter"`), or `undefined`. */
  resolve(name: string): string | undefined;
  /** The configured provider names, sorted. */
  names(): string[];
}

/** The credentials service key (config row `credentials`). */
export const CredentialsKey: ServiceKey<Credentials> = defineService<Credentials>(
  "credentials",
  "Provider secrets resolved environment-first; every resolved value is redacted from the log",
);

/** Where one provider's secret comes from. */
export interface CredentialSource {
  /** Environment variables, in order; the first one set and non-empty wins. */
  readonly env: readonly string[];
  /** The fallback when no variable is set (plain text in config: prefer the environment). */
  readonly value?: string | undefined;
}

/** Config of the `credentials` row. */
export interface CredentialsConfig {
  /** Providers by name. */
  readonly providers: Readonly<Record<string, CredentialSource>>;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The `credentials` row's config schema. */
export const credentialsConfig: z.ZodType<CredentialsConfig> = z.object({
  providers: z.record(
    z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
    z.object({
      env: z.array(z.string().regex(ENV_NAME)).default([]),
      value: z.string().min(4).optional(),
    }).strict(),
  ).default({ openrouter: { env: ["OPENROUTER_API_KEY"] } }).describe(
    "Providers by name: `env` variables read in order (the environment wins), then an optional plain-text " +
      "`value`. Every resolved value is redacted from tool results and the session log",
  ),
}) as z.ZodType<CredentialsConfig>;

/**
 * Provides `credentials`. At mount it resolves every configured provider, and it registers each value it ever
 * resolves as a literal secret: replaced by the redaction token (the `redaction` row's, else the default) in tool
 * results (`tools/post_execute`) and, once `sessions` exists, by a scrubber at the log's append boundary. A key a
 * row reads with `!env OPENROUTER_API_KEY` is the same value, so it is covered as long as this row names that
 * variable.
 *
 * **Permissions**: the environment variables it names.
 */
export const credentialsPlugin: Plugin<CredentialsConfig> = definePlugin({
  name: "terret-credentials",
  description:
    "Provider secrets resolved environment-first; every resolved value is redacted from tool results and the log",
  provides: [CredentialsKey],
  config: credentialsConfig,
  permissions(config): HostPermissions {
    const names = Object.values(config.providers).flatMap((source) => source.env);
    return names.length === 0 ? {} : { env: [...new Set(names)].sort() };
  },
  apply(ctx, config) {
    const secrets = new SecretSet();
    const resolve = (name: string): string | undefined => {
      const source = Object.hasOwn(config.providers, name) ? config.providers[name] : undefined;
      if (source === undefined) return undefined;
      for (const variable of source.env) {
        const value = Deno.env.get(variable);
        if (value !== undefined && value !== "") return secrets.add(value);
      }
      return source.value === undefined ? undefined : secrets.add(source.value);
    };
    for (const name of Object.keys(config.providers)) resolve(name);
    const scrub = (text: string): string => secrets.replace(text, redactionToken(ctx));
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
        scope.get(SessionsKey).registerScrubber(scope, scrub, { marker: redactionToken(scope) });
      },
    }));
    ctx.provide(CredentialsKey, {
      resolve,
      names: () => Object.keys(config.providers).sort(),
    });
  },
});

/** The secret values seen so far, replaced longest first. */
class SecretSet {
  readonly #values = new Set<string>();
  #pattern: RegExp | undefined;

  add(value: string): string {
    if (value.length >= 4 && !this.#values.has(value)) {
      this.#values.add(value);
      this.#pattern = undefined;
    }
    return value;
  }

  replace(text: string, token: string): string {
    if (this.#values.size === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#values].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"),
      "g",
    );
    this.#pattern.lastIndex = 0;
    return text.replace(this.#pattern, () => token);
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
