/**
 * One session's tail on one connection: every durable event from a sequence number on, projected in log order,
 * with the parked calls to ask about and the open prompt waiting for its `turn/end`.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { SessionEvent, Sessions } from "@terret/core/sessions";
import type { ProjectionState } from "./projection.ts";

/** A parked call, as `approval/requested` records it. */
export interface ParkedCall {
  readonly call: { readonly id: string; readonly name: string; readonly args?: unknown };
}

/** The open prompt of a session: answered by the first `turn/end` after its `user/message`. */
export interface PromptWaiter {
  /** The first sequence number the prompt's events may have. */
  readonly from: number;
  sawUser: boolean;
  readonly resolve: (payload: unknown) => void;
  /** Settles with the `turn/end` payload the prompt answers with. */
  readonly ended: Promise<unknown>;
}

/** A running tail. */
export interface SessionTail {
  readonly abort: AbortController;
  /** What the projection has folded so far (the open calls, the mode). */
  readonly state: ProjectionState;
  waiter: PromptWaiter | undefined;
}

/** What a tail does with what it reads. */
export interface TailHooks {
  /** Projects and sends one event (awaited before the next). */
  send(event: SessionEvent, state: ProjectionState): Promise<void>;
  /** Asks about a parked call, once per request, after the event at `ready` (never awaited). */
  ask(requestId: string, payload: ParkedCall, state: ProjectionState): Promise<void>;
  readonly logger?: Logger;
}

/**
 * Tails `sessionId` from `from`; the returned promise resolves once the event at `ready` has been sent (at once
 * when `from > ready`) and rejects when the tail fails before that.
 *
 * Contract: events are sent in log order, each once; a call parked and not resolved by the time the tail reaches
 * `ready` (or parked later) is asked about exactly once; the waiter is resolved by the first `turn/end` after its
 * `user/message`. Aborting `tail.abort` stops the tail quietly.
 */
export function tailSession(
  sessions: Sessions,
  sessionId: string,
  tail: SessionTail,
  range: { readonly from: number; readonly ready: number },
  hooks: TailHooks,
): Promise<void> {
  const { from, ready } = range;
  const { state } = tail;
  const parked = new Map<string, ParkedCall>();
  const asked = new Set<string>();
  const { promise, resolve: done, reject } = Promise.withResolvers<void>();
  if (from > ready) done();
  const run = async (): Promise<void> => {
    for await (
      const event of sessions.stream(sessionId, { from_seq: from, signal: tail.abort.signal })
    ) {
      await hooks.send(event, state);
      const request = (event.payload as { request_id?: string }).request_id ?? "";
      if (event.type === "approval/requested") parked.set(request, event.payload as ParkedCall);
      if (event.type === "approval/resolved") parked.delete(request);
      if (event.seq >= ready) {
        for (const [id, payload] of parked) {
          if (asked.has(id)) continue;
          asked.add(id);
          void hooks.ask(id, payload, state);
        }
      }
      if (event.seq === ready) done();
      const waiter = tail.waiter;
      if (waiter === undefined || event.seq < waiter.from) continue;
      if (event.type === "user/message") waiter.sawUser = true;
      if (event.type === "turn/end" && waiter.sawUser) {
        tail.waiter = undefined;
        waiter.resolve(event.payload);
      }
    }
  };
  run().catch((error: unknown) => {
    if (tail.abort.signal.aborted) return;
    hooks.logger?.log("error", "acp: the session tail failed", {
      session_id: sessionId,
      error: String(error),
    });
    reject(error);
  });
  return promise;
}
