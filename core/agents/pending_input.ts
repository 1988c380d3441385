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

/**
 * {@linkcode findPendingInput}, with `through`: the seq of the last `input/queued` the read saw (0 when none), so a
 * caller knows which of its own durable items the answer covers (a later one may have been queued since).
 */
export async function readPendingInput(
  sessions: Sessions,
  sessionId: string,
  options: SignalOptions = {},
): Promise<{ pending: PendingInput[]; through: number }> {
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const queued = await sessions.read(sessionId, { types: ["input/queued"], ...signal });
  const through = queued.at(-1)?.seq ?? 0;
  if (queued.length === 0) return { pending: [], through };
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
  return { pending, through };
}
