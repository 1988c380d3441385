/**
 * The messages a denied call's `is_error` result carries to the model. Internal to approvals.
 *
 * @module
 */
import type { ApprovalAnswerer } from "../sessions/events.ts";

/** The result text of a denied call: who denied it and why, when a reason was given. */
export function deniedMessage(
  name: string,
  by: ApprovalAnswerer | undefined,
  reason: string | undefined,
): string {
  const why = reason === undefined || reason === "" ? undefined : reason;
  let text: string;
  switch (by?.kind) {
    case "rule":
    case "unattended":
      text = why ?? "it was denied";
      break;
    case "timeout":
      text = "nobody answered before the approval deadline";
      break;
    case undefined:
      text = `it was denied${why === undefined ? "" : ` (${why})`}`;
      break;
    default:
      text = `the user denied it${why === undefined ? "" : ` (${why})`}`;
  }
  return `Cannot run tool "${name}": ${text}. Do not retry the same call; continue without it or ask the user.`;
}
