/**
 * The config row plugin for OpenRouter (and OpenAI-compatible) model adapters: `llm.main`, `llm.titler`, ….
 *
 * @module
 */
import { z } from "zod";
import { definePlugin, type Plugin } from "@terret/hames";
import { Llm } from "../llm_registry.ts";
import { ModelRoleSchema } from "../schemas.ts";
import type {
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
  ModelRole,
  StreamEvent,
} from "../vocabulary.ts";
import { estimateTokens } from "../token_estimate.ts";
import { CredentialsKey } from "../../redaction/credentials.ts";
import { secretField } from "../../redaction/secret_fields.ts";
import {
  OPENROUTER_BASE_URL,
  OpenRouterAdapter,
  type OpenRouterAdapterOptions,
} from "./adapter.ts";

/** The config of an OpenRouter adapter row. */
export interface OpenRouterConfig {
  /** The model role the adapter serves (default `main`). */
  readonly role: ModelRole;
  /** The model slug. */
  readonly model: string;
  /** The API root (default `https://openrouter.ai/api/v1`; any OpenAI-compatible server works). */
  readonly base_url: string;
  /** The API key (`!env OPENROUTER_API_KEY`); when absent, the variable named by `api_key_env` is read at mount. */
  readonly api_key?: string | undefined;
  /** The environment variable read for the key when `api_key` is absent (default `OPENROUTER_API_KEY`). */
  readonly api_key_env: string;
  /** Extra request headers (`HTTP-Referer`, `X-Title`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Extra body fields (`temperature`, `reasoning`, `provider`, `cache_control`, …). */
  readonly params?: Readonly<Record<string, unknown>> | undefined;
  /** Seconds to wait for the response headers and then between two reads (default 600). */
  readonly timeout: number;
  /** Retries after the first attempt, before any output (default 2). */
  readonly max_retries: number;
  /** Capability overrides for the model. */
  readonly capabilities?: {
    readonly tools?: boolean | undefined;
    readonly vision?: boolean | undefined;
    readonly thinking?: boolean | undefined;
    readonly caching?: boolean | undefined;
    readonly max_context_tokens?: number | undefined;
  } | undefined;
}

/** The zod schema of {@linkcode OpenRouterConfig}. */
export const OpenRouterConfigSchema: z.ZodType<OpenRouterConfig> = z.object({
  role: ModelRoleSchema.default("main").describe("The model role this adapter serves"),
  model: z.string().min(1).describe("The model slug, e.g. `anthropic/claude-sonnet-4.5`"),
  base_url: z.url({ protocol: /^https?$/ }).default(OPENROUTER_BASE_URL).describe(
    "The API root; any OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio) works",
  ),
  api_key: secretField(z.string().min(1)).optional().describe(
    "The API key, e.g. `!env OPENROUTER_API_KEY` (never logged, redacted from errors); when absent the row " +
      "reads the variable named by api_key_env, and without either every request fails with a clear error",
  ),
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default("OPENROUTER_API_KEY").describe(
    "The environment variable holding the key when api_key is absent (read when the row mounts)",
  ),
  headers: z.record(z.string(), z.string()).optional().describe(
    "Extra request headers (`HTTP-Referer`, `X-Title`)",
  ),
  params: z.record(z.string(), z.unknown()).optional().describe(
    "Extra body fields (`temperature`, `reasoning`, `provider`, `cache_control`); a request's params win",
  ),
  timeout: z.number().positive().default(600).describe(
    "Seconds to wait for the response headers, then between two reads",
  ),
  max_retries: z.number().int().min(0).max(10).default(2).describe(
    "Retries (jittered backoff, `Retry-After` honoured) before any output was streamed",
  ),
  capabilities: z.object({
    tools: z.boolean().optional(),
    vision: z.boolean().optional(),
    thinking: z.boolean().optional(),
    caching: z.boolean().optional(),
    max_context_tokens: z.number().int().positive().optional(),
  }).strict().optional().describe("Capability overrides for the model"),
}).strict() as z.ZodType<OpenRouterConfig>;

/** Maps a validated row config to adapter options. */
export function openRouterOptions(config: OpenRouterConfig): OpenRouterAdapterOptions {
  const capabilities: { -readonly [K in keyof LlmCapabilities]?: LlmCapabilities[K] } = {};
  const given = config.capabilities ?? {};
  if (given.tools !== undefined) capabilities.tools = given.tools;
  if (given.vision !== undefined) capabilities.vision = given.vision;
  if (given.thinking !== undefined) capabilities.thinking = given.thinking;
  if (given.caching !== undefined) capabilities.caching = given.caching;
  if (given.max_context_tokens !== undefined) {
    capabilities.maxContextTokens = given.max_context_tokens;
  }
  return {
    model: config.model,
    baseUrl: config.base_url,
    apiKey: config.api_key ?? "",
    headers: config.headers ?? {},
    params: config.params ?? {},
    timeoutMs: config.timeout * 1000,
    retry: { maxRetries: config.max_retries },
    capabilities,
  };
}

/**
 * The adapter a row registers when it has no key: it keeps the row (and the host) booting, and fails every request
 * at once, without contacting anyone, with a `provider` error saying where the key goes.
 */
class KeylessAdapter implements LlmAdapter {
  readonly capabilities: LlmCapabilities;
  readonly #message: string;

  get unavailable(): string {
    return this.#message;
  }

  constructor(config: OpenRouterConfig) {
    this.capabilities = new OpenRouterAdapter({
      ...openRouterOptions(config),
      apiKey: "unused",
    }).capabilities;
    this.#message =
      `Cannot send a model request for role "${config.role}": no API key is configured (set ` +
      `${config.api_key_env} in the environment of the host, or give the row an api_key)`;
  }

  countTokens(request: LlmRequest): number {
    return estimateTokens(request);
  }

  async *stream(): AsyncGenerator<StreamEvent> {
    yield { type: "error", error: { kind: "provider", message: this.#message, retryable: false } };
  }
}

/**
 * The API key a row uses: its `api_key`, else the variable named by `api_key_env` (empty counts as unset).
 *
 * @param env where variables are read (default `Deno.env`)
 */
export function openRouterKey(
  config: OpenRouterConfig,
  env: { get(name: string): string | undefined } = Deno.env,
): string | undefined {
  if (config.api_key !== undefined) return config.api_key;
  const value = env.get(config.api_key_env);
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The adapter row plugin: registers an {@linkcode OpenRouterAdapter} for the configured role in the `llm` registry,
 * as an effect of the row. Without a key (no `api_key`, and the `api_key_env` variable unset) it still mounts, and
 * every request fails at once with a `provider` error naming the variable, so a host boots on a fresh machine.
 * Host permissions: `net` to the `base_url` host, and `env` for `api_key_env` when `api_key` is absent.
 */
export const openRouterLlm: Plugin<OpenRouterConfig> = definePlugin({
  name: "terret-llm-openrouter",
  description:
    "A model adapter for OpenRouter or any OpenAI-compatible Chat Completions server, registered for a role",
  inject: [Llm],
  config: OpenRouterConfigSchema,
  permissions: (config) => ({
    net: [new URL(config.base_url).host],
    ...(config.api_key === undefined ? { env: [config.api_key_env] } : {}),
  }),
  apply(ctx, config) {
    // The credentials row is the one door for secrets: the key is read through it (which registers it with the
    // redactor), and a literal or `!env` key is registered there too. Without that row the environment is read.
    const credentials = ctx.maybe(CredentialsKey);
    const key = config.api_key ??
      (credentials === undefined ? openRouterKey(config) : credentials.env(config.api_key_env));
    if (key !== undefined) credentials?.addSecret(ctx, key);
    const adapter: LlmAdapter = key === undefined
      ? new KeylessAdapter(config)
      : new OpenRouterAdapter({ ...openRouterOptions(config), apiKey: key, logger: ctx.logger });
    ctx.get(Llm).register(ctx, { role: config.role, adapter });
  },
});
