/**
 * The projection from the session log to ACP `session/update` notifications: one pure step per durable event, the
 * same for a live turn and for a `session/load` replay.
 *
 * @module
 */
import type { SessionEvent } from "@terret/core/sessions";
import type * as acp from "@agentclientprotocol/sdk";
import { type AcpModeId, isModeId } from "./modes.ts";
import { PLAN_TOOL, planEntries } from "./plan.ts";

/** What the projection remembers between events (which calls are open, under which name and args). */
export interface ProjectionState {
  /** Open tool calls by id: their name and args. */
  readonly calls: Map<string, { readonly name: string; readonly args: Record<string, unknown> }>;
  /** The session mode: the `mode` of the last `policy/updated` that names one (`ask` before any). */
  mode: AcpModeId;
  /** A tool's kind, from its metadata (`other` for a tool no longer registered). */
  readonly kindOf: (name: string) => acp.ToolKind;
}

/** A fresh projection state; `kindOf` gives a tool's kind from its metadata (default: every tool is `other`). */
export function projectionState(
  kindOf: (name: string) => acp.ToolKind = () => "other",
): ProjectionState {
  return { calls: new Map(), mode: "ask", kindOf };
}

function pathOf(args: Record<string, unknown>): string | undefined {
  const path = args.file_path ?? args.path;
  return typeof path === "string" && path.startsWith("/") ? path : undefined;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) =>
    typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text"
      ? String((part as { text?: unknown }).text ?? "")
      : ""
  ).join("");
}

function userBlocks(content: unknown): acp.ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: acp.ContentBlock[] = [];
  for (
    const part of content as { type?: string; text?: string; data?: string; media_type?: string }[]
  ) {
    if (part.type === "text") blocks.push({ type: "text", text: part.text ?? "" });
    else if (part.type === "image" && part.data !== undefined) {
      blocks.push({ type: "image", data: part.data, mimeType: part.media_type ?? "image/png" });
    }
  }
  return blocks;
}

function diffOf(name: string, args: Record<string, unknown>): acp.ToolCallContent[] {
  const path = pathOf(args);
  if (path === undefined) return [];
  if (name === "Write" && typeof args.content === "string") {
    return [{ type: "diff", path, oldText: null, newText: args.content }];
  }
  if (
    name === "Edit" && typeof args.old_string === "string" && typeof args.new_string === "string"
  ) {
    return [{ type: "diff", path, oldText: args.old_string, newText: args.new_string }];
  }
  return [];
}

/**
 * The `session/update` payloads one durable event projects to (none for events an editor has no view of).
 * `user/message` and `context/injected` become `user_message_chunk`s, `assistant/chunk` becomes an agent message or
 * thought chunk, `tool/call` a `tool_call` (`in_progress`, with `kind`, `locations` and a diff for Edit/Write) and
 * `tool/result` a `tool_call_update` (`completed` or `failed`, with the result as text). At `turn/end` every call
 * still open is reported `failed` (cancelled or interrupted). A TodoWrite call that succeeded is followed by a `plan`
 * with its whole list. `assistant/message` is not projected: its text arrived
 * as chunks.
 */
export function projectEvent(event: SessionEvent, state: ProjectionState): acp.SessionUpdate[] {
  const payload = event.payload as Record<string, unknown>;
  switch (event.type) {
    case "user/message":
    case "context/injected":
      return userBlocks(payload.content).map((content) => ({
        sessionUpdate: "user_message_chunk",
        content,
      }));
    case "assistant/chunk": {
      const text = String(payload.text ?? "");
      if (text === "") return [];
      return [{
        sessionUpdate: payload.kind === "thinking" ? "agent_thought_chunk" : "agent_message_chunk",
        content: { type: "text", text },
      }];
    }
    case "tool/call": {
      const id = String(payload.id);
      const name = String(payload.name);
      const args = (payload.args ?? {}) as Record<string, unknown>;
      state.calls.set(id, { name, args });
      const path = pathOf(args);
      const diff = diffOf(name, args);
      return [{
        sessionUpdate: "tool_call",
        toolCallId: id,
        title: path === undefined ? name : `${name} ${path}`,
        kind: state.kindOf(name),
        status: "in_progress",
        rawInput: args,
        ...(path === undefined ? {} : { locations: [{ path }] }),
        ...(diff.length === 0 ? {} : { content: diff }),
      }];
    }
    case "tool/result": {
      const id = String(payload.id);
      const call = state.calls.get(id);
      state.calls.delete(id);
      const text = textOf(payload.content);
      const diff = call === undefined || payload.is_error === true
        ? []
        : diffOf(call.name, call.args);
      const update: acp.SessionUpdate = {
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: payload.is_error === true ? "failed" : "completed",
        content: [...diff, { type: "content", content: { type: "text", text } }],
      };
      // A TodoWrite that succeeded carries the whole plan in its call.
      const entries = call !== undefined && call.name === PLAN_TOOL && payload.is_error !== true
        ? planEntries(call.args)
        : undefined;
      return entries === undefined ? [update] : [update, { sessionUpdate: "plan", entries }];
    }
    case "policy/updated": {
      if (!isModeId(payload.mode)) return [];
      state.mode = payload.mode;
      return [{ sessionUpdate: "current_mode_update", currentModeId: payload.mode }];
    }
    case "turn/end": {
      const open = [...state.calls.keys()];
      state.calls.clear();
      return open.map((toolCallId) => ({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [{
          type: "content",
          content: { type: "text", text: `cancelled (turn ${payload.status})` },
        }],
      }));
    }
    default:
      return [];
  }
}

/** A `turn/end` payload's ACP `stopReason`; `undefined` for a failed turn (answered as an error instead). */
export function stopReasonOf(payload: unknown): acp.StopReason | undefined {
  const { status, error } = payload as { status?: string; error?: { code?: string } };
  switch (status) {
    case "completed":
      return "end_turn";
    case "cancelled":
      return "cancelled";
    case "rejected":
      return "refusal";
    default:
      return error?.code === "MaxSteps" ? "max_turn_requests" : undefined;
  }
}
