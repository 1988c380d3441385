/**
 * The ACP side of human approval: a parked call (`approval/requested` in the log) becomes a
 * `session/request_permission` to the client, and the option the client picks becomes a verdict on the approvals
 * seam.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";

/** A verdict from the client, as the approvals service records it (`approval/resolved`). */
export interface AcpVerdict {
  readonly decision: "allow" | "deny";
  /** `true` for `allow_always`/`reject_always`: the verdict also becomes a session rule for this tool. */
  readonly remember: boolean;
  readonly reason: string;
  readonly by: { readonly kind: "acp"; readonly client?: string };
}

/**
 * The approvals seam as the ACP server needs it.
 *
 * Contract: `resolve` records the verdict for the parked call `requestId` of session `sessionId` durably (as
 * `approval/resolved`, and with `remember` a session rule, as the socket's `remember` does) before it resolves.
 * It rejects when the request is unknown or already resolved; the call then stays as the log says. The server
 * never resolves a call on its own: with no seam wired, a parked call stays parked.
 */
export interface AcpApprovals {
  resolve(sessionId: string, requestId: string, verdict: AcpVerdict): Promise<void>;
}

/** The four options offered for every parked call, in this order. */
export const PERMISSION_OPTIONS: readonly acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

/** The verdict an answer to `session/request_permission` stands for (`cancelled` and unknown options deny). */
export function verdictOf(response: acp.RequestPermissionResponse, client?: string): AcpVerdict {
  const by = client === undefined ? { kind: "acp" as const } : { kind: "acp" as const, client };
  const outcome = response.outcome;
  const option = outcome.outcome === "selected" ? outcome.optionId : undefined;
  switch (option) {
    case "allow_once":
      return { decision: "allow", remember: false, reason: "allowed once by the ACP client", by };
    case "allow_always":
      return { decision: "allow", remember: true, reason: "always allowed by the ACP client", by };
    case "reject_once":
      return { decision: "deny", remember: false, reason: "rejected by the ACP client", by };
    case "reject_always":
      return { decision: "deny", remember: true, reason: "always rejected by the ACP client", by };
    default:
      return {
        decision: "deny",
        remember: false,
        reason: option === undefined
          ? "the ACP client cancelled the permission request"
          : `the ACP client picked an unknown option "${option}"`,
        by,
      };
  }
}

/** The `session/request_permission` params for a parked call (an `approval/requested` payload) of a tool of `kind`. */
export function permissionRequest(
  sessionId: string,
  payload: {
    readonly call: { readonly id: string; readonly name: string; readonly args?: unknown };
  },
  kind: acp.ToolKind = "other",
): acp.RequestPermissionRequest {
  const { id, name, args } = payload.call;
  return {
    sessionId,
    toolCall: {
      toolCallId: id,
      title: name,
      kind,
      status: "pending",
      rawInput: args,
    },
    options: [...PERMISSION_OPTIONS],
  };
}
