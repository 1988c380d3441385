/**
 * The agent's current plan, read from its log: the `todos` of the last `TodoWrite` call whose result was not an
 * error (the tool holds no state; its durable call is the storage).
 *
 * @module
 */
import type { Sessions } from "@terret/core";
import { readBack } from "@terret/core/sessions";

/** One item of a plan, as `TodoWrite` took it (Claude Code's shape). */
export interface PlanItem {
  readonly content: string;
  readonly status: "pending" | "in_progress" | "completed";
  readonly activeForm: string;
}

/**
 * The plan of the session's last successful `TodoWrite` call, or `null` when it has none (an empty list is a
 * cleared plan: `[]`). A call whose result was an error (a list the tool refused) is not the plan.
 *
 * The plan is almost always near the head: the log is read back a window of seqs at a time, from the head, until
 * the last successful result and its call are found, so a long session costs the events since its last plan, not
 * every tool call it ever made.
 */
export async function currentPlan(
  sessions: Sessions,
  sessionId: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<readonly PlanItem[] | null> {
  let accepted: string | undefined;
  for await (
    const events of readBack(sessions, sessionId, {
      types: ["tool/call", "tool/result"],
      ...options,
    })
  ) {
    for (let i = events.length - 1; i >= 0; i--) {
      const payload = events[i]!.payload as {
        id?: unknown;
        name?: unknown;
        is_error?: unknown;
        args?: { todos?: unknown };
      };
      if (payload.name !== "TodoWrite") continue;
      if (events[i]!.type === "tool/result") {
        if (accepted === undefined && payload.is_error === false) accepted = String(payload.id);
        continue;
      }
      if (accepted !== undefined && payload.id === accepted) {
        const todos = payload.args?.todos;
        return Array.isArray(todos) ? todos.map(planItem) : null;
      }
    }
  }
  return null;
}

function planItem(todo: unknown): PlanItem {
  const { content, status, activeForm } = todo as Record<string, unknown>;
  return {
    content: String(content).trim(),
    status: status as PlanItem["status"],
    activeForm: String(activeForm).trim(),
  };
}
