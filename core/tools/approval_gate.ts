/**
 * The approval gate seam (service key `approvals`): what the tool pipeline consults, after the allow list admits a
 * call and before the handler runs, for every tool whose approval is not `never`. The `approvals` row implements it.
 *
 * @module
 */
import { type Context, defineService, type ServiceKey } from "@terret/hames";
import type { ToolApproval } from "./tool.ts";

/** The call the gate reviews: the exact admitted name and validated arguments. */
export interface GateCall {
  /** The call id. */
  readonly id: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** The tool's approval metadata (`policy` or `always`). */
  readonly approval: Exclude<ToolApproval, "never">;
  readonly session_id: string;
  readonly agent_id: string;
}

/**
 * The gate's verdict: run, or an `is_error` result with `message` for the model. `bound` says the verdict holds for
 * these exact arguments only (a person approved them, or a rule about arguments matched): a `tools/execute`
 * listener that rewrites them then gets the call denied.
 */
export type GateVerdict =
  | { readonly allowed: true; readonly bound?: boolean }
  | { readonly allowed: false; readonly message: string };

/** Options for {@linkcode ApprovalGate.review}. */
export interface ReviewOptions {
  /** The calling agent's context. */
  readonly ctx: Context;
  /** The call's signal: when it aborts, `review` rejects with its reason and runs nothing. */
  readonly signal: AbortSignal;
}

/**
 * The approval gate.
 *
 * Contract: `review` decides one call and may wait (parked, durably) for a verdict; it resolves `{allowed: true}`
 * only when a rule or a recorded `approval/resolved` allows this exact call. It never runs the tool. It fails
 * closed: a log read or append failure is a denial. It rejects only when `signal` aborts.
 */
export interface ApprovalGate {
  /** Decides one call; may park it until a verdict is recorded. */
  review(call: GateCall, options: ReviewOptions): Promise<GateVerdict>;
}

/** The approval gate's service key (`approvals`). */
export const ApprovalGateKey: ServiceKey<ApprovalGate> = defineService<ApprovalGate>(
  "approvals",
  "The approval gate the tool pipeline consults for policy and always tools (row approvals)",
);

/** The denial when a tool needs approval and no approvals row is mounted: it names the row to enable. */
export function noApprovalsDenial(name: string, approval: ToolApproval): string {
  return `Cannot run tool "${name}": its approval is "${approval}" and approvals are not enabled on this ` +
    "host (enable config row approvals), so the call is denied";
}
