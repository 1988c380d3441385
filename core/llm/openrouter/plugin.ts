/**
 * The config row plugin for OpenRouter (and OpenAI-compatible) model adapters: `llm.main`, `llm.titler`, ….
 *
 * @module
 */
import { z } from "zod";
import { definePlugin, type Plugin } from "@terret/hames";
import { Llm } from "../llm_registry.ts";
import { ModelRoleSchema } from "../schemas.ts";
import type { LlmCapabilities, ModelRole } from "../vocabulary.ts";
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
  /** The API key; write it as `!env OPENROUTER_API_KEY` so it comes through the credentials path. */
  readonly api_key: string;
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
  api_key: z.string().min(1).describe(
    "The API key; write `!env OPENROUTER_API_KEY` (never logged, redacted from errors)",
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
    apiKey: config.api_key,
    headers: config.headers ?? {},
    params: config.params ?? {},
    timeoutMs: config.timeout * 1000,
    retry: { maxRetries: config.max_retries },
    capabilities,
  };
}

/**
 * The adapter row plugin: registers an {@linkcode OpenRouterAdapter} for the configured role in the `llm` registry,
 * as an effect of the row. Host permissions: `net` to the `base_url` host (the key itself comes through config).
 */
export const openRouterLlm: Plugin<OpenRouterConfig> = definePlugin({
  name: "terret-llm-openrouter",
  description:
    "A model adapter for OpenRouter or any OpenAI-compatible Chat Completions server, registered for a role",
  inject: [Llm],
  config: OpenRouterConfigSchema,
  permissions: (config) => ({ net: [new URL(config.base_url).host] }),
  apply(ctx, config) {
    const adapter = new OpenRouterAdapter({ ...openRouterOptions(config), logger: ctx.logger });
    ctx.get(Llm).register(ctx, { role: config.role, adapter });
  },
});
