/**
 * Telemetry: the `terret-telemetry` plugin (row `telemetry`), which derives OpenTelemetry spans (a turn, its steps,
 * each model request and tool call, socket connections) and metrics from the session log and the live hooks, and
 * the `telemetry` service other packages report through. Exported by Deno's built-in OTLP exporter
 * (`OTEL_DENO=true`); off unless configured. See docs/observability.md.
 *
 * @module
 */
export {
  type ConnectionSpan,
  type Telemetry,
  type TelemetryConfig,
  telemetryConfig,
  TelemetryKey,
  TelemetryService,
} from "./telemetry.ts";
