/**
 * Finding a session's unclaimed durable input: `input/queued` events no `user/message` / `context/injected` claims
 * (by `queued_seq`) yet.
 *
 * @module
 */
import type { Content } from "../sessions/events.ts";
import type { Sessions, SignalOptions } from "../sessions/sessions.ts";

/** One acknowledged input still waiting for a step to claim it. */
export interface PendingInput {
  /** The seq of its `input/queued` event (the claim carries it as `queued_seq`). */
  readonly seq: number;
  readonly kind: "message" | "steer";
  readonly content: Content;
  readonly wake: boolean;
}

/**
 * The session's unclaimed `input/queued` events, in seq order. Reads only `input/queued` when the session has none
 * (the common case costs one indexed read), else the claims from the first queued seq on.
 */
export async function findPendingInput(
  sessions: Sessions,
  sessionId: string,
  options: SignalOptions = {},
): Promise<PendingInput[]> {
  return (await readPendingInput(sessions, sessionId, options)).pending;
}

/** Options for {@linkcode readPendingInput}. */
export interface ReadPendingOptions extends SignalOptions {
  /**
   * A seq at or below which every `input/queued` is known to be claimed (a caller's earlier answer: `settled`): the
   * read starts after it, so it costs the input since, not the session's whole history. Default 0.
   */
  readonly after?: number;
}

/**
 * {@linkcode findPendingInput}, with `through`: the seq of the last `input/queued` the read saw (or `after`, when it
 * saw none), so a caller knows which of its own durable items the answer covers (a later one may have been queued
 * since); and `settled`: a seq at or below which every `input/queued` is claimed in the log, to pass as the next
 * read's `after` (claims are never undone, and seqs commit in order).
 */
export async function readPendingInput(
  sessions: Sessions,
  sessionId: string,
  options: ReadPendingOptions = {},
): Promise<{ pending: PendingInput[]; through: number; settled: number }> {
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const after = options.after ?? 0;
  const queued = await sessions.read(sessionId, {
    types: ["input/queued"],
    from_seq: after + 1,
    ...signal,
  });
  const through = queued.at(-1)?.seq ?? after;
  if (queued.length === 0) return { pending: [], through, settled: through };
  const claims = await sessions.read(sessionId, {
    types: ["user/message", "context/injected"],
    from_seq: queued[0]!.seq,
    ...signal,
  });
  const claimed = new Set<unknown>();
  for (const claim of claims) {
    claimed.add((claim.payload as { queued_seq?: unknown }).queued_seq);
  }
  const pending: PendingInput[] = [];
  for (const event of queued) {
    if (claimed.has(event.seq)) continue;
    const payload = event.payload as Omit<PendingInput, "seq">;
    pending.push({
      seq: event.seq,
      kind: payload.kind,
      content: payload.content,
      wake: payload.wake,
    });
  }
  return { pending, through, settled: pending.length > 0 ? pending[0]!.seq - 1 : through };
}
