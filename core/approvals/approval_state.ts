/**
 * A session's approvals, folded from its log: every request with its verdict, the latest request per call id, the
 * session rules answers added, and whether the session is unattended. The approvals service keeps one per session
 * in a {@linkcode SessionProjection}, so the gate never scans the log per call.
 *
 * @module
 */
import type { SessionEvent } from "../sessions/envelope.ts";
import type { ApprovalAnswerer } from "../sessions/events.ts";

/** One parked call as the log records it. */
export interface ApprovalRequest {
  readonly request_id: string;
  readonly call: {
    readonly id: string;
    readonly name: string;
    readonly args: Readonly<Record<string, unknown>>;
  };
  readonly reason?: string;
  readonly deadline_at?: string;
  /** The tool's approval when it was asked (`policy` or `always`); decides what expiry means. */
  readonly approval?: "policy" | "always";
  /** The seq of its `approval/requested`. */
  readonly seq: number;
  /** Its verdict, once recorded. */
  readonly verdict?: ApprovalVerdict;
}

/** A recorded verdict. */
export interface ApprovalVerdict {
  readonly decision: "allow" | "deny";
  readonly by?: ApprovalAnswerer;
  readonly reason?: string;
  readonly rule?: string;
}

/** A session's approvals. */
export interface ApprovalState {
  /** Every request, by request id. */
  readonly requests: ReadonlyMap<string, ApprovalRequest>;
  /**
   * The request of each call id still owed a result: set by `approval/requested`, cleared by the call's
   * `tool/result` and by a new non-resumed `tool/call` of the same id. An entry whose request has a verdict is a call
   * answered but not yet run (a restart came in between): boot resumes its agent.
   */
  readonly byCall: ReadonlyMap<string, string>;
  /** Request ids without a verdict, in request order. */
  readonly open: readonly string[];
  /** Session rules added by answers (`approval/resolved` with `rule`), allow and deny. */
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  /** Set from `session/created` meta `{unattended: true}` (subagents). */
  readonly unattended: boolean;
  /** The agent the session was created for (`session/created` meta `agent_id`), if any. */
  readonly agent_id?: string;
}

/** The event types the state folds. */
export const APPROVAL_STATE_TYPES: readonly string[] = Object.freeze([
  "tool/call",
  "tool/result",
  "approval/requested",
  "approval/resolved",
]);

/** The state of a session from its `session/created`. */
export function initialApprovalState(created: SessionEvent): ApprovalState {
  const meta = (created.payload as { meta?: { unattended?: unknown; agent_id?: unknown } }).meta;
  return {
    requests: new Map(),
    byCall: new Map(),
    open: [],
    allow: [],
    deny: [],
    unattended: meta?.unattended === true,
    ...(typeof meta?.agent_id === "string" ? { agent_id: meta.agent_id } : {}),
  };
}

/** Folds one event; copy-on-write, so a state handed out never changes under its holder. */
export function foldApprovalState(state: ApprovalState, event: SessionEvent): ApprovalState {
  const payload = event.payload as Record<string, unknown>;
  switch (event.type) {
    case "tool/call":
    case "tool/result": {
      const id = payload.id as string;
      if (event.type === "tool/call" && payload.resumed === true || !state.byCall.has(id)) {
        return state;
      }
      const byCall = new Map(state.byCall);
      byCall.delete(id);
      return { ...state, byCall };
    }
    case "approval/requested": {
      const request = requestOf(event);
      const call = request.call;
      if (state.requests.has(request.request_id)) return state;
      return {
        ...state,
        requests: new Map(state.requests).set(request.request_id, request),
        byCall: new Map(state.byCall).set(call.id, request.request_id),
        open: [...state.open, request.request_id],
      };
    }
    case "approval/resolved": {
      const id = payload.request_id as string;
      const request = state.requests.get(id);
      if (request === undefined || request.verdict !== undefined) return state;
      const verdict = verdictOf(payload);
      const rule = verdict.rule;
      return {
        ...state,
        requests: new Map(state.requests).set(id, { ...request, verdict }),
        open: state.open.filter((open) => open !== id),
        allow: rule !== undefined && verdict.decision === "allow"
          ? [...state.allow, rule]
          : state.allow,
        deny: rule !== undefined && verdict.decision === "deny"
          ? [...state.deny, rule]
          : state.deny,
      };
    }
    default:
      return state;
  }
}

/**
 * The state of a session from its `session/created` and every later event of {@linkcode APPROVAL_STATE_TYPES}, in
 * seq order, built in one pass: equal to {@linkcode initialApprovalState} folded with each event by
 * {@linkcode foldApprovalState}, but in time linear in the events (the fold copies the session's requests at every
 * request and verdict, which replayed over a long session is quadratic). What a read from the log uses.
 */
export function replayApprovalState(
  created: SessionEvent,
  events: readonly SessionEvent[],
): ApprovalState {
  const initial = initialApprovalState(created);
  const requests = new Map<string, ApprovalRequest>();
  const byCall = new Map<string, string>();
  const open = new Set<string>();
  const allow: string[] = [];
  const deny: string[] = [];
  for (const event of events) {
    const payload = event.payload as Record<string, unknown>;
    switch (event.type) {
      case "tool/call":
      case "tool/result":
        if (event.type === "tool/result" || payload.resumed !== true) {
          byCall.delete(payload.id as string);
        }
        break;
      case "approval/requested": {
        const request = requestOf(event);
        if (requests.has(request.request_id)) break;
        requests.set(request.request_id, request);
        byCall.set(request.call.id, request.request_id);
        open.add(request.request_id);
        break;
      }
      case "approval/resolved": {
        const id = payload.request_id as string;
        const request = requests.get(id);
        if (request === undefined || request.verdict !== undefined) break;
        const verdict = verdictOf(payload);
        requests.set(id, { ...request, verdict });
        open.delete(id);
        if (verdict.rule !== undefined) {
          (verdict.decision === "allow" ? allow : deny).push(verdict.rule);
        }
        break;
      }
    }
  }
  return { ...initial, requests, byCall, open: [...open], allow, deny };
}

/** The request an `approval/requested` records. */
function requestOf(event: SessionEvent): ApprovalRequest {
  const payload = event.payload as Record<string, unknown>;
  const call = payload.call as ApprovalRequest["call"];
  return {
    request_id: payload.request_id as string,
    call: { id: call.id, name: call.name, args: call.args },
    ...(typeof payload.reason === "string" ? { reason: payload.reason } : {}),
    ...(typeof payload.deadline_at === "string" ? { deadline_at: payload.deadline_at } : {}),
    ...(payload.approval === "policy" || payload.approval === "always"
      ? { approval: payload.approval }
      : {}),
    seq: event.seq,
  };
}

/** The verdict an `approval/resolved` records. */
function verdictOf(payload: Record<string, unknown>): ApprovalVerdict {
  return {
    decision: payload.decision as "allow" | "deny",
    ...(payload.by === undefined ? {} : { by: payload.by as ApprovalAnswerer }),
    ...(typeof payload.reason === "string" ? { reason: payload.reason } : {}),
    ...(typeof payload.rule === "string" ? { rule: payload.rule } : {}),
  };
}
