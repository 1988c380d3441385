/**
 * The `redaction` row: secret shapes from config replaced in every tool result (`tools/post_execute`) and at the
 * session log's append boundary (a scrubber), with one replacement token the rest of the harness can ask about.
 *
 * @module
 */
import {
  type Context,
  definePlugin,
  defineService,
  type Disposer,
  type Plugin,
  type ServiceKey,
} from "@terret/hames";
import { z } from "zod";
import { SessionsKey } from "../sessions/sessions.ts";
import { ToolsPostExecute } from "../tools/events.ts";
import type { ToolContent } from "../tools/tool.ts";
import { DEFAULT_REDACTION_TOKEN, MAX_TOKEN_LENGTH, Redactor } from "./redactor.ts";

/**
 * The mounted redactor (service key `redaction`).
 *
 * Contract: `redact` is what the log scrubber and the `tools/post_execute` listener apply; `isRedacted` tells
 * whether a value (every string value and key, at any depth) carries `token` — the loop asks it of an owed call's
 * name and arguments before re-executing them on resume, and refuses a call that carries it. `addSecret` registers
 * a literal value for as long as `owner` lives (the `credentials` row feeds every value it resolves here).
 */
export interface Redaction {
  /** The replacement token. */
  readonly token: string;
  /** Replaces known secret values and shapes in `text`. */
  redact(text: string): string;
  /** True when `value` carries the token. */
  isRedacted(value: unknown): boolean;
  /** Registers a literal secret for as long as `owner` lives. */
  addSecret(owner: Context, secret: string): Disposer;
}

/** The redaction service key (config row `redaction`). */
export const RedactionKey: ServiceKey<Redaction> = defineService<Redaction>(
  "redaction",
  "Replaces secret shapes and values in tool results and at the log's append boundary",
);

/** Config of the `redaction` row. */
export interface RedactionConfig {
  /** Regular expression sources (JavaScript syntax, flags `gu`) matching secret shapes. */
  readonly patterns: readonly string[];
  /** What a secret becomes. */
  readonly replacement: string;
  /** Trailing characters of streamed text held back while a pattern may still be forming there. */
  readonly stream_window: number;
}

/**
 * Shapes of widely used credentials, narrow enough not to match prose: OpenAI/OpenRouter/Anthropic-style `sk-`
 * keys, GitHub tokens, AWS access key ids, Slack tokens, Google API keys, and PEM private key blocks.
 */
export const DEFAULT_REDACTION_PATTERNS: readonly string[] = Object.freeze([
  "sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{20,}",
  "gh[pousr]_[A-Za-z0-9]{36,}",
  "github_pat_[A-Za-z0-9_]{22,}",
  "AKIA[0-9A-Z]{16}",
  "xox[abprs]-[A-Za-z0-9-]{10,}",
  "AIza[0-9A-Za-z_-]{35}",
  "-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----[\\s\\S]*?-----END (?:[A-Z]+ )*PRIVATE KEY-----",
]);

/** The `redaction` row's config schema. */
export const redactionConfig: z.ZodType<RedactionConfig> = z.object({
  patterns: z.array(z.string().min(1)).default([...DEFAULT_REDACTION_PATTERNS]).describe(
    "Regular expression sources (JavaScript syntax, compiled with flags gu; (?i:…) for case-insensitive parts) " +
      "matching secret shapes; keep them narrow enough not to match prose. It catches known shapes, not all secrets",
  ),
  replacement: z.string().min(1).max(MAX_TOKEN_LENGTH).default(DEFAULT_REDACTION_TOKEN).describe(
    "What a secret becomes. The default uses only [A-Za-z0-9_-] (a redacted tool name stays a function name " +
      "providers accept) and starts with '-' (never itself a valid tool name); no pattern may match it",
  ),
  stream_window: z.number().int().min(0).max(65_536).default(64).describe(
    "Streamed assistant text: how many trailing characters are held back because a secret shape may still be " +
      "forming there (everything before them is appended at once). Registered secrets hold back only what could " +
      "start one; a match reaching the end of the text is held while it grows; a pattern with a literal prefix of " +
      "5+ characters (the PEM private key) is held from that prefix until its match completes or the text rules " +
      "one out (a certificate's BEGIN line is not held). Size it to the longest " +
      "shape that is only recognisable after that many characters and has no such prefix",
  ),
}) as z.ZodType<RedactionConfig>;

/**
 * Provides `redaction`: a {@linkcode Redactor} over the configured patterns, applied to every tool result on
 * `tools/post_execute` (text content and text parts; image data is left to the append scrubber) and, once a
 * `sessions` service exists, registered as its scrubber, so what a result, a user message, a steer or a plugin's
 * event carries is redacted before it becomes durable.
 *
 * Limits (seed §6): history already in the log is not rewritten; a `tools/pre_execute` veto skips
 * `tools/post_execute` (the scrubber still covers its result); a `tools/post_execute` listener registered before
 * this one sees unredacted results. Reconfiguring restarts the row with the new patterns and token.
 *
 * @throws {TypeError} (at mount) for a pattern that does not compile, matches the empty string or matches the token
 */
export const redactionPlugin: Plugin<RedactionConfig> = definePlugin({
  name: "terret-redaction",
  description:
    "Redacts secret shapes (config patterns) and registered secret values from tool results and, as the " +
    "session log's scrubber, from every appended event",
  provides: [RedactionKey],
  config: redactionConfig,
  apply(ctx, config) {
    const redactor = new Redactor({ patterns: config.patterns, replacement: config.replacement });
    const service: Redaction = {
      token: redactor.token,
      redact: (text) => redactor.redact(text),
      isRedacted: (value) => redactor.isRedacted(value),
      addSecret: (owner, secret) =>
        owner.effect(() => redactor.addLiteral(secret), "redaction: secret"),
    };
    ctx.on(
      ToolsPostExecute,
      (completion, next) =>
        next({ ...completion, content: redactContent(completion.content, redactor) }),
    );
    ctx.plugin(definePlugin({
      name: "terret-redaction-scrubber",
      inject: [SessionsKey],
      apply(scope) {
        scope.get(SessionsKey).registerScrubber(scope, (text) => redactor.redact(text), {
          marker: redactor.token,
          safePrefix: (text) => redactor.safePrefix(text, config.stream_window),
        });
      },
    }));
    ctx.provide(RedactionKey, service);
  },
});

/** The token in force on `ctx`: the `redaction` row's, or {@linkcode DEFAULT_REDACTION_TOKEN} without one. */
export function redactionToken(ctx: Context): string {
  return ctx.maybe(RedactionKey)?.token ?? DEFAULT_REDACTION_TOKEN;
}

function redactContent(content: ToolContent, redactor: Redactor): ToolContent {
  if (typeof content === "string") return redactor.redact(content);
  return content.map((part) =>
    part.type === "text" ? { type: "text" as const, text: redactor.redact(part.text) } : part
  );
}
