import assert from "node:assert/strict";
import { createContext, createMemoryLogger } from "@terret/hames";
import { SessionEventAppended } from "../sessions/events.ts";
import { LlmStream } from "../llm/events.ts";
import { AgentRequest } from "../loop/events.ts";
import { AgentStatusChanged } from "../agents/events.ts";
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
