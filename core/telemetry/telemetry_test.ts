import assert from "node:assert/strict";
import { createContext, createMemoryLogger } from "@terret/hames";
import { SessionEventAppended } from "../sessions/events.ts";
import { LlmStream } from "../llm/events.ts";
import { AgentRequest } from "../loop/events.ts";
import { AgentStatusChanged } from "../agents/events.ts";
import { RedactionKey } from "../redaction/redaction_plugin.ts";
import type { Redaction } from "../redaction/redaction_plugin.ts";
import {
  type Context as OtelContext,
  type Span,
  type SpanOptions,
  trace,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { TelemetryKey, TelemetryService } from "./telemetry.ts";

const HOOKS = [SessionEventAppended, LlmStream, AgentRequest, AgentStatusChanged] as const;

/** Runs `fn` with `OTEL_DENO` unset (restored after). */
async function withoutOtel(fn: () => Promise<void>): Promise<void> {
  const saved = Deno.env.get("OTEL_DENO");
  Deno.env.delete("OTEL_DENO");
  try {
    await fn();
  } finally {
    if (saved !== undefined) Deno.env.set("OTEL_DENO", saved);
  }
}

Deno.test("TelemetryService off (enabled: auto without OTEL_DENO) listens to nothing, so a step pays nothing", async () => {
  await withoutOtel(async () => {
    const logger = createMemoryLogger();
    await using ctx = createContext({ mode: "test", logger });
    const before = HOOKS.map((hook) => ctx.listenerCount(hook));
    ctx.plugin(TelemetryService, { enabled: "auto" });
    await ctx.idle();
    const telemetry = ctx.get(TelemetryKey);
    assert.equal(telemetry.enabled, false);
    assert.deepStrictEqual(HOOKS.map((hook) => ctx.listenerCount(hook)), before);
    // The reporting methods are no-ops when off.
    telemetry.connection("a1").end({ code: 1000 });
    telemetry.lagged("a1");
    telemetry.sandboxSpawn(3, { sandbox: "none" });
    assert.deepStrictEqual(logger.records, []);
  });
});

Deno.test("TelemetryService forced on without OTEL_DENO listens and says once that nothing is exported", async () => {
  await withoutOtel(async () => {
    const logger = createMemoryLogger();
    await using ctx = createContext({ mode: "test", logger });
    ctx.plugin(TelemetryService, { enabled: "on" });
    await ctx.idle();
    assert.equal(ctx.get(TelemetryKey).enabled, true);
    assert.deepStrictEqual(HOOKS.map((hook) => ctx.listenerCount(hook)), [1, 1, 1, 1]);
    assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [[
      "warn",
      "telemetry: enabled: on, but OTEL_DENO is not true: spans and metrics go nowhere (run with OTEL_DENO=true)",
    ]]);
  });
});

interface Recorded {
  name: string;
  parent: string | undefined;
  attributes: Record<string, unknown>;
  ended: boolean;
}

/** A tracer provider that records every span (set as the global one for this test process). */
function recordingProvider(): { provider: TracerProvider; spans: Recorded[] } {
  const spans: Recorded[] = [];
  const tracer: Tracer = {
    startSpan(name: string, options: SpanOptions = {}, parentContext?: OtelContext): Span {
      const parent = parentContext === undefined ? undefined : trace.getSpan(parentContext);
      const record: Recorded = {
        name,
        parent: (parent as unknown as { record?: Recorded } | undefined)?.record?.name,
        attributes: { ...options.attributes },
        ended: false,
      };
      spans.push(record);
      const span = {
        record,
        spanContext: () => ({ traceId: "0".repeat(32), spanId: "1".repeat(16), traceFlags: 1 }),
        setAttribute(key: string, value: unknown) {
          record.attributes[key] = value;
          return span;
        },
        setAttributes(attributes: Record<string, unknown>) {
          Object.assign(record.attributes, attributes);
          return span;
        },
        setStatus: () => span,
        updateName(next: string) {
          record.name = next;
          return span;
        },
        end() {
          record.ended = true;
        },
        isRecording: () => true,
        addEvent: () => span,
        addLink: () => span,
        addLinks: () => span,
        recordException: () => {},
      };
      return span as unknown as Span;
    },
    startActiveSpan: (() => {
      throw new Error("not used");
    }) as Tracer["startActiveSpan"],
  };
  return { provider: { getTracer: () => tracer }, spans };
}

Deno.test("TelemetryService passes span attributes through the redactor: a registered secret never reaches a span", async () => {
  const { provider, spans } = recordingProvider();
  assert.equal(trace.setGlobalTracerProvider(provider), true);
  try {
    await withoutOtel(async () => {
      const secret = "sk-live-0123456789abcdef";
      await using ctx = createContext({ mode: "test", logger: createMemoryLogger() });
      ctx.provide(RedactionKey, {
        token: "-REDACTED-",
        redact: (text: string) => text.replaceAll(secret, "-REDACTED-"),
        isRedacted: () => false,
        addSecret: () => () => {},
      } as unknown as Redaction);
      ctx.plugin(TelemetryService, { enabled: "on" });
      await ctx.idle();
      let seq = 0;
      const append = (type: string, payload: unknown): void =>
        ctx.emit(SessionEventAppended, {
          id: `e${++seq}`,
          session_id: `s-${secret}`,
          seq,
          at: new Date(0).toISOString(),
          type,
          payload,
          parent_id: null,
        });
      append("turn/start", { agent_id: `agent-${secret}` });
      append("step/start", { step: 1 });
      append("tool/call", { id: "c1", name: `Tool${secret}`, args: { key: secret } });
      append("tool/result", { id: "c1", name: "Tool", content: secret, is_error: true });
      append("step/end", { usage: { input_tokens: 3, output_tokens: 2 }, finish_reason: "stop" });
      append("turn/end", { status: "failed", error: { message: secret } });
      assert.deepStrictEqual(
        spans.map((span) => [span.name, span.parent, span.ended]),
        [
          ["invoke_agent", undefined, true],
          ["terret.step", "invoke_agent", true],
          ["execute_tool Tool-REDACTED-", "terret.step", true],
        ],
      );
      assert.deepStrictEqual(spans[2]!.attributes, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Tool-REDACTED-",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.conversation.id": "s--REDACTED-",
        "terret.tool.status": "error",
      });
      assert.deepStrictEqual(spans[0]!.attributes, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": "agent--REDACTED-",
        "gen_ai.conversation.id": "s--REDACTED-",
        "terret.turn.status": "failed",
      });
    });
  } finally {
    trace.disable();
  }
});
