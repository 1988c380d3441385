/**
 * The approvals service's contract: the gate, answers, open requests, and the stance `trt doctor` reports.
 *
 * @module
 */
import type { SessionEvent } from "../sessions/envelope.ts";
import type { ApprovalAnswerer } from "../sessions/events.ts";
import type { ApprovalGate, GateCall } from "../tools/approval_gate.ts";
import type { ApprovalRequest, ApprovalState } from "./approval_state.ts";
import type { ApprovalsConfig } from "./approvals_config.ts";

/** An answer to an open request. */
export interface AnswerInput {
  /** `allow` or `deny`; anything else is refused (`InvalidDecision`). */
  readonly decision: "allow" | "deny";
  /** Who answers (`client` with the token's id over the socket, `acp`, `console`). */
  readonly by: ApprovalAnswerer;
  /** Shown to the model with a denial. */
  readonly reason?: string;
  /** Also add a session rule derived from the call (see {@linkcode rememberRule}). */
  readonly remember?: boolean;
  readonly signal?: AbortSignal;
}

/** What the rules say about a call before anyone is asked. */
export type GateDecision =
  | {
    readonly kind: "allow";
    readonly rule: string;
    /** The rule is about the arguments (not the whole tool). */
    readonly bound: boolean;
  }
  | { readonly kind: "deny"; readonly reason: string }
  | { readonly kind: "ask"; readonly reason: string };

/** The effective approval stance (the row's config), as `trt doctor` reports it. */
export type ApprovalStance = Pick<
  ApprovalsConfig,
  "allow" | "ask" | "deny" | "always_can_be_ruled" | "deadline" | "on_timeout" | "unattended"
>;

/**
 * The approvals service (key `approvals`).
 *
 * Contract:
 * - `review` (the gate): `never` tools never reach it; a call the log already holds a request for (a resumed call)
 *   gets that request's verdict or waits on it, never a second request; otherwise deny rules (config and session)
 *   refuse, `ask` rules ask, allow rules admit a `policy` tool (an `always` one only with `always_can_be_ruled`),
 *   and whatever is left is asked about: `approval/requested` is appended, the agent is `waiting_approval`, and
 *   the call waits for `approval/resolved`. Unattended agents are never parked: what would be asked is denied.
 *   Any failure to read or append is a denial.
 * - `answer` appends `approval/resolved`; the first answer wins, and every later one is refused
 *   (`AlreadyResolved`) and appends nothing. An unknown request is `UnknownRequest`, a bad decision
 *   `InvalidDecision`, an underivable `remember` `CannotRemember`; none of them appends.
 */
export interface Approvals extends ApprovalGate {
  /** Records an answer to an open request. */
  answer(sessionId: string, requestId: string, input: AnswerInput): Promise<SessionEvent>;
  /** The session's open requests, in request order. */
  pending(
    sessionId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<ApprovalRequest[]>;
  /** The session's folded approvals (`undefined` for a session the log does not hold). */
  state(
    sessionId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<ApprovalState | undefined>;
  /** What the rules alone say about a call (nothing is appended). */
  decide(call: GateCall, options?: { readonly signal?: AbortSignal }): Promise<GateDecision>;
  /** The effective stance. */
  stance(): ApprovalStance;
}
