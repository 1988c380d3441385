/**
 * Lineage read from the log: a parent's depth, the id of the child a call owns, and what a child's last turn came
 * to. Used by the subagents service and its providers.
 *
 * @module
 */
import type { SessionEvent } from "../sessions/envelope.ts";
import { FoldCache } from "../sessions/_fold_cache.ts";
import { readBack } from "../sessions/read_back.ts";
import type { Sessions } from "../sessions/sessions.ts";

/** What `session/created` `meta.subagent` records about a child. */
export interface SubagentMeta {
  readonly parent_session_id: string;
  readonly parent_agent_id: string;
  readonly call_id: string;
  readonly type: string;
  readonly description: string;
  readonly depth: number;
}

/** The `subagent` meta of a session's `session/created`, when it is a child. */
export async function subagentMeta(
  sessions: Sessions,
  sessionId: string,
  signal?: AbortSignal,
): Promise<SubagentMeta | undefined> {
  const [created] = await sessions.read(sessionId, {
    to_seq: 1,
    ...(signal === undefined ? {} : { signal }),
  });
  const meta = (created?.payload as { meta?: { subagent?: unknown } } | undefined)?.meta?.subagent;
  return typeof meta === "object" && meta !== null ? meta as SubagentMeta : undefined;
}

/** The tool name whose calls number a parent's children. */
export const TASK_TOOL = "Task";

/**
 * The id of the child a parent's call owns, `<agent_id>.sub-<n>`: `n` is the call's place among the parent log's
 * distinct `Task` calls, so it is the same after a restart and never reused. A session already holding another
 * call's child (a call made outside the loop) moves `n` on; the one holding this call's child is returned with
 * `existing: true`.
 *
 * @param calls the parents' Task calls kept between calls (the subagents service keeps one); without it, the
 *   parent's tool calls are all read
 */
export async function childIdFor(
  sessions: Sessions,
  parent: { readonly session_id: string; readonly agent_id: string; readonly call_id: string },
  signal?: AbortSignal,
  calls: TaskCalls = new TaskCalls(sessions, 1),
): Promise<{ readonly id: string; readonly existing: boolean }> {
  const options = signal === undefined ? {} : { signal };
  for (let n = await calls.place(parent.session_id, parent.call_id, signal);; n++) {
    const id = `${parent.agent_id}.sub-${n}`;
    if (await sessions.head(id, options) === 0) return { id, existing: false };
    const meta = await subagentMeta(sessions, id, signal);
    if (meta?.call_id === parent.call_id && meta.parent_session_id === parent.session_id) {
      return { id, existing: true };
    }
  }
}

/**
 * Parents' `Task` calls, numbered in log order (the `n` of {@linkcode childIdFor}), kept per parent session (the
 * least recently used dropped past `maxSessions`) and caught up from the log at each use. The log is append-only,
 * so a parent's Task call reads only the tool calls made since its previous one, not every call it ever made, and
 * the numbers are exactly those a read of the whole log gives (events another process appended included: the head
 * is read each time).
 */
export class TaskCalls {
  readonly #places: FoldCache<Map<string, number>>;

  constructor(sessions: Sessions, maxSessions = 1_000) {
    this.#places = new FoldCache<Map<string, number>>(
      {
        empty: () => new Map(),
        fold(places, event) {
          if (event.type !== "tool/call") return;
          const { id, name } = event.payload as { id: string; name: string };
          if (name === TASK_TOOL && !places.has(id)) places.set(id, places.size + 1);
        },
      },
      {
        head: (sessionId, signal) =>
          sessions.head(sessionId, signal === undefined ? {} : { signal }),
        read: (sessionId, from, to, signal) =>
          sessions.read(sessionId, {
            types: ["tool/call"],
            from_seq: from,
            to_seq: to,
            ...(signal === undefined ? {} : { signal }),
          }),
      },
      maxSessions,
    );
  }

  /**
   * The call's place (1-based) among the session's distinct Task calls; for a call the log does not hold, the place
   * the next one takes.
   */
  place(sessionId: string, callId: string, signal?: AbortSignal): Promise<number> {
    return this.#places.current(
      sessionId,
      signal,
      (places) => places.get(callId) ?? places.size + 1,
    );
  }
}

/** How a child's last turn ended, read from its log. */
export interface ChildEnd {
  /** `turn/end`'s status, or `undefined` while no turn closed. */
  readonly status: "completed" | "failed" | "cancelled" | "rejected" | undefined;
  /** The text of the last assistant message of that turn. */
  readonly text: string;
  readonly error?: { readonly code: string; readonly message: string };
}

/** Reads how a child's last turn ended, from its whole log (see {@linkcode readChildEnd} to read only that turn). */
export function childEnd(events: readonly SessionEvent[]): ChildEnd {
  const start = events.findLastIndex((event) => event.type === "turn/start");
  const turn = start < 0 ? [] : events.slice(start);
  return endOf(
    turn.findLast((event) => event.type === "turn/end"),
    turn.findLast((event) => event.type === "assistant/message"),
  );
}

/**
 * How a child's last turn ended, read back from the head: a window of seqs at a time, until the last turn's start,
 * or both its end and its last assistant message, are found. A child costs its last turn's tail, not its whole log.
 * For a log whose every `turn/end` follows its `turn/start` (every log the loop writes), it equals
 * {@linkcode childEnd} of the whole log.
 */
export async function readChildEnd(
  sessions: Sessions,
  childId: string,
  signal?: AbortSignal,
): Promise<ChildEnd> {
  let end: SessionEvent | undefined;
  let message: SessionEvent | undefined;
  const options = { types: CHILD_END_TYPES, ...(signal === undefined ? {} : { signal }) };
  for await (const events of readBack(sessions, childId, options)) {
    // Read back from the head, every event seen comes after the last `turn/start` not seen yet.
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]!;
      if (event.type === "turn/start") return endOf(end, message);
      if (event.type === "turn/end") end ??= event;
      else message ??= event;
      if (end !== undefined && message !== undefined) return endOf(end, message);
    }
  }
  // No `turn/start` at all: no turn, whatever else the log holds (as `childEnd` reads it).
  return { status: undefined, text: "" };
}

const CHILD_END_TYPES = ["turn/start", "turn/end", "assistant/message"];

/** The end of a turn from its last `turn/end` and its last `assistant/message` (either may be missing). */
function endOf(end: SessionEvent | undefined, message: SessionEvent | undefined): ChildEnd {
  const parts = (message?.payload as { parts?: readonly { type: string; text?: string }[] })
    ?.parts ?? [];
  const text = parts.filter((part) => part.type === "text").map((part) => part.text ?? "").join("");
  if (end === undefined) return { status: undefined, text };
  const payload = end.payload as {
    status: ChildEnd["status"];
    error?: { code?: unknown; message?: unknown };
  };
  const error = payload.error === undefined ? undefined : {
    code: String(payload.error.code ?? "Error"),
    message: String(payload.error.message ?? ""),
  };
  return { status: payload.status, text, ...(error === undefined ? {} : { error }) };
}
