/**
 * Telemetry (row `telemetry`, plugin `terret-telemetry`): OpenTelemetry spans and metrics derived from the session
 * log and the live hooks, exported by Deno's built-in OTLP exporter (`OTEL_DENO=true`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`). Off unless configured: with `enabled: auto` (the default) it runs only when
 * `OTEL_DENO` is `true`, and when off it listens to nothing. See docs/observability.md.
 *
 * @module
 */
import { type Attributes, type Histogram, metrics, SpanKind, trace } from "@opentelemetry/api";
import { z } from "zod";
import {
  type Context,
  defineService,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { AgentDisposed, AgentStatusChanged } from "../agents/events.ts";
import { AgentsKey } from "../agents/agents.ts";
import { LlmStream } from "../llm/events.ts";
import type { LlmRequest, StreamEvent } from "../llm/vocabulary.ts";
import { AgentRequest } from "../loop/events.ts";
import { RedactionKey } from "../redaction/redaction_plugin.ts";
import { SessionEventAppended } from "../sessions/events.ts";
import { type AttributeScrubber, SessionSpans } from "./_session_spans.ts";

/** An open span for a socket connection. */
export interface ConnectionSpan {
  /** Ends the span (with how the connection closed, when known). */
  end(close?: { readonly code: number; readonly reason?: string }): void;
}

/**
 * The telemetry service (key `telemetry`): what other packages report through (the socket, the sandbox).
 *
 * Contract: every method is cheap and never throws; when `enabled` is false they do nothing, so callers need no
 * check of their own. Attributes pass the redactor before they reach a span.
 */
export interface Telemetry {
  /** Whether spans and metrics are being recorded. */
  readonly enabled: boolean;
  /** Opens a span for a socket connection to `agentId`. */
  connection(agentId: string, attributes?: Attributes): ConnectionSpan;
  /** Counts a socket client dropped as lagged. */
  lagged(agentId: string): void;
  /** Records how long starting a sandboxed program took, in milliseconds. */
  sandboxSpawn(milliseconds: number, attributes: { readonly sandbox: string }): void;
}

/** The telemetry service key. */
export const TelemetryKey: ServiceKey<Telemetry> = defineService<Telemetry>(
  "telemetry",
  "OpenTelemetry spans and metrics from the session log and live hooks; off unless configured",
);

/** The `telemetry` row's config. */
export interface TelemetryConfig {
  /** `auto`: on when `OTEL_DENO` is `true`; `on`/`off` force it. */
  readonly enabled: "auto" | "on" | "off";
}

/** The `telemetry` row's config schema. */
export const telemetryConfig: z.ZodType<TelemetryConfig> = z.strictObject({
  enabled: z.enum(["auto", "on", "off"]).default("auto").describe(
    "auto: record spans and metrics when OTEL_DENO=true (Deno's OTLP exporter is on); on/off force it",
  ),
}) as z.ZodType<TelemetryConfig>;

const OFF_CONNECTION: ConnectionSpan = Object.freeze({ end: () => {} });
const METER = "terret";
const ACTIVE = new Set(["running", "waiting_approval"]);

/** The telemetry row (plugin `terret-telemetry`). */
export class TelemetryService extends Service<TelemetryConfig> implements Telemetry {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-telemetry";
  /** One line for the config catalog. */
  static readonly description =
    "Telemetry (row telemetry): OpenTelemetry spans and metrics through Deno's OTLP exporter; off unless OTEL_DENO=true.";
  /** The service key. */
  static readonly key: ServiceKey<Telemetry> = TelemetryKey;
  /** The config schema. */
  static readonly config: z.ZodType<TelemetryConfig> = telemetryConfig;

  /** Reads the OTel switches from the environment. */
  static permissions(): HostPermissions {
    return { env: ["OTEL_DENO", "OTEL_EXPORTER_OTLP_ENDPOINT"] };
  }

  #enabled = false;
  #spans: SessionSpans | undefined;
  #spawns: Histogram | undefined;
  #laggedCounter: ReturnType<ReturnType<typeof metrics.getMeter>["createCounter"]> | undefined;
  readonly #statuses = new Map<string, string>();
  readonly #requests = new WeakMap<LlmRequest, { session: string; agent: string; step: number }>();

  /** Whether spans and metrics are being recorded. */
  get enabled(): boolean {
    return this.#enabled;
  }

  override start(): void {
    const exporting = Deno.env.get("OTEL_DENO") === "true" || Deno.env.get("OTEL_DENO") === "1";
    this.#enabled = this.config.enabled === "on" ||
      (this.config.enabled === "auto" && exporting);
    if (!this.#enabled) return;
    if (!exporting) {
      this.ctx.logger.log(
        "warn",
        "telemetry: enabled: on, but OTEL_DENO is not true: spans and metrics go nowhere (run with OTEL_DENO=true)",
      );
    }
    checkEndpoint(this.ctx);
    this.#mount();
  }

  override stop(): void {
    this.#spans?.endAll();
    this.#enabled = false;
  }

  connection(agentId: string, attributes: Attributes = {}): ConnectionSpan {
    if (!this.#enabled) return OFF_CONNECTION;
    const span = trace.getTracer(METER).startSpan("terret.ws.connection", {
      kind: SpanKind.SERVER,
      attributes: this.#scrub({ "gen_ai.agent.id": agentId, ...attributes }),
    });
    return {
      end: (close) => {
        if (close !== undefined) {
          span.setAttributes(this.#scrub({
            "terret.ws.close_code": close.code,
            ...(close.reason === undefined ? {} : { "terret.ws.close_reason": close.reason }),
          }));
        }
        span.end();
      },
    };
  }

  lagged(agentId: string): void {
    this.#laggedCounter?.add(1, this.#scrub({ "gen_ai.agent.id": agentId }));
  }

  sandboxSpawn(milliseconds: number, attributes: { readonly sandbox: string }): void {
    this.#spawns?.record(milliseconds, this.#scrub({ "terret.sandbox": attributes.sandbox }));
  }

  #scrub: AttributeScrubber = (attributes) => {
    const redaction = this.ctx.maybe(RedactionKey);
    if (redaction === undefined) return attributes;
    const out: Attributes = {};
    for (const [key, value] of Object.entries(attributes)) {
      out[key] = typeof value === "string"
        ? redaction.redact(value)
        : Array.isArray(value)
        ? value.map((
          item,
        ) => (typeof item === "string" ? redaction.redact(item) : item)) as typeof value
        : value;
    }
    return out;
  };

  #mount(): void {
    const tracer = trace.getTracer(METER);
    const meter = metrics.getMeter(METER);
    const spans = new SessionSpans(tracer, this.#scrub);
    this.#spans = spans;
    const turns = meter.createCounter("terret.turns", {
      description: "Turns ended, by status (a rate of it is turns per second)",
      unit: "{turn}",
    });
    const append = meter.createHistogram("terret.session.append.latency", {
      description: "From an event's timestamp to its durable announcement (millisecond resolution)",
      unit: "ms",
    });
    const tokens = meter.createHistogram("gen_ai.client.token.usage", {
      description: "Tokens per model request, by type",
      unit: "{token}",
    });
    this.#spawns = meter.createHistogram("terret.sandbox.spawn.duration", {
      description: "How long starting a sandboxed program took",
      unit: "ms",
    });
    this.#laggedCounter = meter.createCounter("terret.ws.lagged_clients", {
      description: "Socket clients dropped as lagged",
      unit: "{client}",
    });
    // Synchronous gauges, set whenever an agent's status changes: they are exported up to the final flush.
    const active = meter.createGauge("terret.agents.active", {
      description: "Agents running a turn or waiting for an approval",
      unit: "{agent}",
    });
    const resident = meter.createGauge("terret.agents.resident", {
      description: "Agents held in memory",
      unit: "{agent}",
    });
    const gauge = (): void => {
      let count = 0;
      for (const status of this.#statuses.values()) if (ACTIVE.has(status)) count++;
      active.record(count);
      resident.record(this.ctx.maybe(AgentsKey)?.count ?? 0);
    };

    this.ctx.on(SessionEventAppended, (event) => {
      spans.observe(event);
      const at = Date.parse(event.at);
      if (Number.isFinite(at)) append.record(Math.max(0, Date.now() - at));
      if (event.type === "turn/end") {
        const status = String((event.payload as { status?: unknown }).status ?? "");
        turns.add(1, { "terret.turn.status": status });
      } else if (event.type === "step/end") {
        const usage = (event.payload as { usage?: Record<string, unknown> }).usage ?? {};
        tokens.record(Number(usage.input_tokens ?? 0), { "gen_ai.token.type": "input" });
        tokens.record(Number(usage.output_tokens ?? 0), { "gen_ai.token.type": "output" });
      }
    });
    this.ctx.on(AgentStatusChanged, (payload) => {
      this.#statuses.set(payload.agent_id, payload.status);
      gauge();
    });
    this.ctx.on(AgentDisposed, (payload) => {
      this.#statuses.delete(payload.agent_id);
      gauge();
    });
    this.ctx.on(AgentRequest, async (payload, next) => {
      const final = await next(payload);
      const chosen = final ?? payload;
      this.#requests.set(chosen.request, {
        session: chosen.session_id,
        agent: chosen.agent_id,
        step: chosen.step,
      });
      return final;
    });
    this.ctx.on(LlmStream, (payload, next) => {
      const owner = this.#requests.get(payload.request);
      const parent = owner === undefined
        ? undefined
        : spans.stepContext(owner.session, owner.agent, owner.step);
      return this.#chatSpan(payload.role, payload.request, parent, next(payload));
    });
  }

  /** Wraps a model stream in a `chat <model>` span (GenAI conventions) with its usage and time to first token. */
  async *#chatSpan(
    role: string,
    request: LlmRequest,
    parent: ReturnType<SessionSpans["stepContext"]> | undefined,
    stream: AsyncIterable<StreamEvent>,
  ): AsyncIterable<StreamEvent> {
    const tracer = trace.getTracer(METER);
    const started = performance.now();
    const model = request.model;
    const span = tracer.startSpan(`chat ${this.#scrubText(model ?? role)}`, {
      kind: SpanKind.CLIENT,
      attributes: this.#scrub({
        "gen_ai.operation.name": "chat",
        "terret.llm.role": role,
        ...(model === undefined ? {} : { "gen_ai.request.model": model }),
      }),
    }, parent);
    let first = true;
    try {
      for await (const event of stream) {
        if (
          first &&
          (event.type === "text_delta" || event.type === "thinking_delta" ||
            event.type === "tool_call_start")
        ) {
          first = false;
          span.setAttribute("terret.llm.time_to_first_token_ms", performance.now() - started);
        }
        if (event.type === "message_start" && event.model !== undefined) {
          span.setAttributes(this.#scrub({
            "gen_ai.response.model": event.model,
            ...(model === undefined ? { "gen_ai.request.model": event.model } : {}),
          }));
          if (model === undefined) span.updateName(`chat ${this.#scrubText(event.model)}`);
        } else if (event.type === "usage") {
          span.setAttributes({
            "gen_ai.usage.input_tokens": event.usage.input_tokens,
            "gen_ai.usage.output_tokens": event.usage.output_tokens,
            ...(event.usage.cost === undefined ? {} : { "terret.usage.cost": event.usage.cost }),
          });
        } else if (event.type === "message_stop") {
          span.setAttribute("gen_ai.response.finish_reasons", [event.finishReason]);
        } else if (event.type === "error") {
          span.setAttributes(this.#scrub({ "error.type": event.error.kind }));
          span.setStatus({ code: 2, message: this.#scrubText(event.error.message) });
        }
        yield event;
      }
    } finally {
      span.end();
    }
  }

  #scrubText(text: string): string {
    return this.ctx.maybe(RedactionKey)?.redact(text) ?? text;
  }
}

/** Warns once when `OTEL_EXPORTER_OTLP_ENDPOINT` is set but is not an http(s) URL (Deno's exporter says nothing). */
function checkEndpoint(ctx: Context): void {
  const endpoint = Deno.env.get("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (endpoint === undefined || endpoint === "") return;
  let valid = false;
  try {
    valid = ["http:", "https:"].includes(new URL(endpoint).protocol);
  } catch {
    valid = false;
  }
  if (!valid) {
    ctx.logger.log(
      "warn",
      `telemetry: Cannot export to OTEL_EXPORTER_OTLP_ENDPOINT "${endpoint}": not an http(s) URL; spans and metrics are dropped`,
    );
  }
}
