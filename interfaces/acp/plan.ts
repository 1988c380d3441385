/**
 * ACP `plan` updates from TodoWrite: the durable `tool/call` of a TodoWrite that succeeded carries the whole list.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";

/** The tool whose calls are projected as plans. */
export const PLAN_TOOL = "TodoWrite";

const STATUSES: readonly string[] = ["pending", "in_progress", "completed"];

/**
 * The plan entries of a TodoWrite call's `args` (`{todos: [{content, status, activeForm}]}`), every entry at
 * `medium` priority (TodoWrite has none); `undefined` when the args are not such a list.
 */
export function planEntries(args: Readonly<Record<string, unknown>>): acp.PlanEntry[] | undefined {
  const todos = args.todos;
  if (!Array.isArray(todos)) return undefined;
  const entries: acp.PlanEntry[] = [];
  for (const todo of todos) {
    const { content, status } = (todo ?? {}) as { content?: unknown; status?: unknown };
    if (typeof content !== "string" || typeof status !== "string" || !STATUSES.includes(status)) {
      return undefined;
    }
    entries.push({ content, priority: "medium", status: status as acp.PlanEntryStatus });
  }
  return entries;
}
