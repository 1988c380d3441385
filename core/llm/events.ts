/**
 * The live extension point around every model request.
 *
 * @module
 */
import { z } from "zod";
import { defineEvent, type EventDefinition } from "@terret/hames";
import { LlmRequestSchema, ModelRoleSchema } from "./schemas.ts";
import type { HttpTransport, LlmRequest, ModelRole, StreamEvent } from "./vocabulary.ts";

/** Payload of {@linkcode LlmStream}. */
export interface LlmStreamPayload {
  /** The model role the request is for; the registry resolves the adapter from it after the chain. */
  readonly role: ModelRole;
  /** The provider-neutral request. */
  readonly request: LlmRequest;
  /** Aborts the request; middleware that replaces the stream must honour it. */
  readonly signal: AbortSignal;
  /** An HTTP transport replacing the adapter's own (set by record and replay middleware). */
  readonly transport?: HttpTransport;
}

/**
 * The `llm/stream` waterfall, dispatched by the `llm` registry around every model request. The chain's result is
 * the stream of events; the innermost step asks the adapter registered for `role` (falling back to `main`).
 *
 * Contract: a listener may call `next(payload')` with a rewritten request, role or transport (model routing,
 * caching hints, record and replay) and may wrap or replace the returned stream. A replacement stream must keep
 * the adapter contract: never throw for provider failures, end with exactly one `message_stop` or `error`, and end
 * promptly with an `aborted` error when `signal` aborts. A listener may throw synchronously only for a
 * misconfiguration (a missing cassette entry, a policy refusal); that error reaches the caller of `stream()`.
 */
export const LlmStream: EventDefinition<
  "waterfall",
  LlmStreamPayload,
  AsyncIterable<StreamEvent>
> = defineEvent("llm/stream", {
  mode: "waterfall",
  owner: "@terret/core",
  description:
    "Wraps every model request: rewrite the request, role or transport, or wrap or replace the event stream.",
  payload: z.object({
    role: ModelRoleSchema,
    request: LlmRequestSchema,
    signal: z.instanceof(AbortSignal),
    transport: z.custom<HttpTransport>((value) => typeof value === "function").optional(),
  }) as unknown as z.ZodType<LlmStreamPayload>,
  result: z.custom<AsyncIterable<StreamEvent>>((value) =>
    typeof value === "object" && value !== null && Symbol.asyncIterator in value
  ),
});

/** Every event the LLM seam declares, for the events catalog. */
export const LLM_EVENTS: readonly EventDefinition[] = [LlmStream];
