/**
 * Session modes: the approval stance an editor picks for a session, each a durable `policy/updated` (with the mode
 * id beside the allow patterns) so a reload, a replay and a restart see the same mode.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";

/** The mode ids: `ask` (the default), `auto-edit` and `read-only`. */
export type AcpModeId = "ask" | "auto-edit" | "read-only";

/** The tools `read-only` keeps (the rest of the floor is narrowed away for the session). */
export const READ_ONLY_TOOLS: readonly string[] = ["Read", "Glob", "Grep", "WebFetch", "TodoWrite"];

/** The file-editing tools `auto-edit` lets through without asking the client. */
export const AUTO_EDIT_TOOLS: readonly string[] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];

/** The modes offered in `session/new` and `session/load`, in this order. */
export const ACP_MODES: readonly acp.SessionMode[] = [
  {
    id: "ask",
    name: "Ask",
    description:
      "Every tool the profile allows; calls the approvals row parks are asked of the editor",
  },
  {
    id: "auto-edit",
    name: "Auto-edit",
    description:
      "As Ask, but parked file edits (Edit, MultiEdit, Write, NotebookEdit) are allowed without asking",
  },
  {
    id: "read-only",
    name: "Read-only",
    description: `Only ${
      READ_ONLY_TOOLS.join(", ")
    } (where the profile allows them); nothing is changed`,
  },
];

/** True when `id` names a mode. */
export function isModeId(id: unknown): id is AcpModeId {
  return ACP_MODES.some((mode) => mode.id === id);
}

/**
 * The `policy/updated` payload a mode is recorded as: `read-only` narrows the session to
 * {@linkcode READ_ONLY_TOOLS}; `ask` and `auto-edit` restore the floor (`*`).
 */
export function modePolicy(mode: AcpModeId): { allow: string[]; mode: AcpModeId } {
  return { allow: mode === "read-only" ? [...READ_ONLY_TOOLS] : ["*"], mode };
}

/** The `modes` of a `session/new` or `session/load` answer. */
export function modeState(current: AcpModeId): acp.SessionModeState {
  return { currentModeId: current, availableModes: [...ACP_MODES] };
}
