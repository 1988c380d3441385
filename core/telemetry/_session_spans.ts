/**
 * Spans built from the session log as it is appended: a turn (`invoke_agent`), its steps (`terret.step`) and each
 * tool call (`execute_tool <name>`, with its approval wait), parented turn → step → tool call. Model requests
 * (`chat <model>`) are opened by the telemetry service around the `llm/stream` chain and parented to the step this
 * module holds open for the session.
 *
 * @module
 */
import {
  type Attributes,
  type Context as OtelContext,
  context as otelContext,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import type { SessionEvent } from "../sessions/envelope.ts";

interface ToolSpan {
  readonly span: Span;
  approvalAt?: number;
}

interface SpanState {
  turn?: Span | undefined;
  turnContext?: OtelContext | undefined;
  /** The turn span was opened by a model request before `turn/start` was seen. */
  turnEarly?: boolean;
  step?: Span | undefined;
  stepContext?: OtelContext | undefined;
  stepNumber?: number;
  readonly tools: Map<string, ToolSpan>;
  /** Approval request id → tool call id. */
  readonly approvals: Map<string, string>;
}

/** Scrubs attribute values (secrets never reach an attribute). */
export type AttributeScrubber = (attributes: Attributes) => Attributes;

/** Builds the spans of every session from its appended events. */
export class SessionSpans {
  readonly #tracer: Tracer;
  readonly #scrub: AttributeScrubber;
  readonly #sessions = new Map<string, SpanState>();

  constructor(tracer: Tracer, scrub: AttributeScrubber) {
    this.#tracer = tracer;
    this.#scrub = scrub;
  }

  /** The context a model request of `sessionId`'s step `step` is parented to (opening the step if needed). */
  stepContext(sessionId: string, agentId: string, step: number): OtelContext {
    const state = this.#state(sessionId);
    if (state.turn === undefined) {
      this.#openTurn(state, sessionId, agentId);
      state.turnEarly = true;
    }
    if (state.step === undefined || state.stepNumber !== step) {
      this.#openStep(state, sessionId, step);
    }
    return state.stepContext!;
  }

  /** Folds one appended event into the session's spans. */
  observe(event: SessionEvent): void {
    const payload = (event.payload ?? {}) as Record<string, unknown>;
    const state = this.#sessions.get(event.session_id);
    switch (event.type) {
      case "turn/start": {
        const current = this.#state(event.session_id);
        if (current.turnEarly === true) {
          current.turnEarly = false;
          return;
        }
        this.#closeTurn(current, "superseded");
        this.#openTurn(current, event.session_id, String(payload.agent_id ?? ""));
        return;
      }
      case "step/start": {
        const current = this.#state(event.session_id);
        if (current.turn !== undefined) current.turnEarly = false;
        const step = typeof payload.step === "number"
          ? payload.step
          : (current.stepNumber ?? 0) + 1;
        if (current.step !== undefined && current.stepNumber === step) return;
        this.#openStep(current, event.session_id, step);
        return;
      }
      case "tool/call": {
        if (state === undefined) return;
        const parent = state.stepContext ?? state.turnContext ?? otelContext.active();
        const attributes = this.#scrub({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": String(payload.name ?? ""),
          "gen_ai.tool.call.id": String(payload.id ?? ""),
          "gen_ai.conversation.id": event.session_id,
        });
        // The name carries the (scrubbed) tool name, like the attribute.
        const span = this.#tracer.startSpan(`execute_tool ${attributes["gen_ai.tool.name"]}`, {
          kind: SpanKind.INTERNAL,
          attributes,
        }, parent);
        state.tools.set(String(payload.id ?? ""), { span });
        return;
      }
      case "approval/requested": {
        if (state === undefined) return;
        const call = payload.call as { id?: unknown } | undefined;
        const callId = String(call?.id ?? "");
        state.approvals.set(String(payload.request_id ?? ""), callId);
        const tool = state.tools.get(callId);
        if (tool !== undefined) tool.approvalAt = performance.now();
        return;
      }
      case "approval/resolved": {
        if (state === undefined) return;
        const requestId = String(payload.request_id ?? "");
        const tool = state.tools.get(state.approvals.get(requestId) ?? "");
        state.approvals.delete(requestId);
        if (tool === undefined) return;
        const by = payload.by as { kind?: unknown } | undefined;
        tool.span.setAttributes(this.#scrub({
          "terret.approval.decision": String(payload.decision ?? ""),
          "terret.approval.by": String(by?.kind ?? ""),
          ...(tool.approvalAt === undefined
            ? {}
            : { "terret.tool.approval_wait_ms": performance.now() - tool.approvalAt }),
        }));
        return;
      }
      case "tool/result": {
        if (state === undefined) return;
        const id = String(payload.id ?? "");
        const tool = state.tools.get(id);
        if (tool === undefined) return;
        state.tools.delete(id);
        const failed = payload.is_error === true;
        tool.span.setAttribute("terret.tool.status", failed ? "error" : "ok");
        if (failed) tool.span.setStatus({ code: SpanStatusCode.ERROR });
        tool.span.end();
        return;
      }
      case "step/end": {
        if (state?.step === undefined) return;
        const usage = (payload.usage ?? {}) as Record<string, unknown>;
        state.step.setAttributes(this.#scrub({
          "gen_ai.response.finish_reasons": [String(payload.finish_reason ?? "")],
          "gen_ai.usage.input_tokens": Number(usage.input_tokens ?? 0),
          "gen_ai.usage.output_tokens": Number(usage.output_tokens ?? 0),
          ...(typeof usage.cost === "number" ? { "terret.usage.cost": usage.cost } : {}),
        }));
        this.#closeStep(state);
        return;
      }
      case "turn/end": {
        if (state === undefined) return;
        this.#closeTurn(state, String(payload.status ?? ""));
        this.#sessions.delete(event.session_id);
        return;
      }
    }
  }

  /** Ends every open span (the host is stopping). */
  endAll(): void {
    for (const state of this.#sessions.values()) this.#closeTurn(state, "stopped");
    this.#sessions.clear();
  }

  #state(sessionId: string): SpanState {
    let state = this.#sessions.get(sessionId);
    if (state === undefined) {
      state = { tools: new Map(), approvals: new Map() };
      this.#sessions.set(sessionId, state);
    }
    return state;
  }

  #openTurn(state: SpanState, sessionId: string, agentId: string): void {
    // A turn is a trace of its own: not a child of whatever request or connection happened to wake the agent.
    state.turn = this.#tracer.startSpan("invoke_agent", {
      kind: SpanKind.INTERNAL,
      root: true,
      attributes: this.#scrub({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": agentId,
        "gen_ai.conversation.id": sessionId,
      }),
    });
    state.turnContext = trace.setSpan(ROOT_CONTEXT, state.turn);
  }

  #openStep(state: SpanState, sessionId: string, step: number): void {
    this.#closeStep(state);
    state.stepNumber = step;
    state.step = this.#tracer.startSpan("terret.step", {
      kind: SpanKind.INTERNAL,
      attributes: this.#scrub({ "terret.step": step, "gen_ai.conversation.id": sessionId }),
    }, state.turnContext ?? otelContext.active());
    state.stepContext = trace.setSpan(state.turnContext ?? otelContext.active(), state.step);
  }

  #closeStep(state: SpanState): void {
    for (const tool of state.tools.values()) tool.span.end();
    state.tools.clear();
    state.step?.end();
    state.step = undefined;
    state.stepContext = undefined;
  }

  #closeTurn(state: SpanState, status: string): void {
    this.#closeStep(state);
    if (state.turn === undefined) return;
    state.turn.setAttribute("terret.turn.status", status);
    if (status === "failed") state.turn.setStatus({ code: SpanStatusCode.ERROR });
    state.turn.end();
    state.turn = undefined;
    state.turnContext = undefined;
    state.turnEarly = false;
  }
}
