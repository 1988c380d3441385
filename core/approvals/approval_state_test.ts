/**
 * A session's approvals state rebuilt from its log in one pass equals the event-by-event fold the live path uses,
 * for any mix of calls, results, requests and verdicts.
 */
import assert from "node:assert/strict";
import { seededRandom } from "@terret/core/testing";
import { createContext } from "@terret/hames";
import { SessionLog } from "@terret/core";
import { MemorySessionStore, type SessionEvent, SessionProjection } from "@terret/core/sessions";
import {
  APPROVAL_STATE_TYPES,
  type ApprovalState,
  foldApprovalState,
  initialApprovalState,
  replayApprovalState,
} from "@terret/core/approvals";

/**
 * A session of `count` events drawn from a few call and request ids, so requests repeat, verdicts arrive twice or
 * for unknown requests, calls are resumed, and results clear what they owe.
 */
function session(seed: number, count: number): SessionEvent[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const calls = ["c1", "c2", "c3", "c4"];
  const requests = ["r1", "r2", "r3", "r4", "r5", "r6"];
  const at = "2026-01-01T00:00:00.000Z";
  const events: SessionEvent[] = [{
    id: "e1",
    session_id: "s",
    seq: 1,
    at,
    type: "session/created",
    payload: { meta: { agent_id: "a", unattended: next() < 0.5 } },
    parent_id: null,
  }];
  for (let seq = 2; seq <= count + 1; seq++) {
    const call = pick(calls);
    const kind = Math.floor(next() * 5);
    const [type, payload] = kind === 0
      ? ["tool/call", {
        id: call,
        name: "Bash",
        args: {},
        ...(next() < 0.3 ? { resumed: true } : {}),
      }]
      : kind === 1
      ? ["tool/result", { id: call, name: "Bash", content: "ok", is_error: false }]
      : kind === 2 || kind === 3
      ? ["approval/requested", {
        request_id: pick(requests),
        call: { id: call, name: "Bash", args: { command: `echo ${seq}` } },
        ...(next() < 0.5 ? { reason: "asks", approval: "policy" } : {}),
      }]
      : ["approval/resolved", {
        request_id: pick(requests),
        decision: next() < 0.5 ? "allow" : "deny",
        ...(next() < 0.4 ? { rule: `Bash(echo ${seq})` } : {}),
        ...(next() < 0.5 ? { reason: "because" } : {}),
      }];
    events.push({ id: `e${seq}`, session_id: "s", seq, at, type, payload, parent_id: null });
  }
  return events;
}

function folded(events: readonly SessionEvent[]): ApprovalState {
  let state = initialApprovalState(events[0]!);
  for (const event of events.slice(1)) state = foldApprovalState(state, event);
  return state;
}

Deno.test("replayApprovalState() equals the event-by-event fold over 400 generated sessions", () => {
  for (let seed = 1; seed <= 400; seed++) {
    const events = session(seed, 5 + (seed % 60));
    assert.deepStrictEqual(
      replayApprovalState(events[0]!, events.slice(1)),
      folded(events),
      `seed ${seed}`,
    );
  }
});

Deno.test("a projection with a replay builds the state read from the log with it, and folds live events after", async () => {
  await using ctx = createContext({ mode: "test" });
  const store = new MemorySessionStore();
  const events = session(7, 300);
  await store.importSession(events);
  const log = new SessionLog(ctx, store);
  const replays: number[] = [];
  const projection = new SessionProjection<ApprovalState>(ctx, log, {
    types: APPROVAL_STATE_TYPES,
    initial: initialApprovalState,
    fold: foldApprovalState,
    replay: (created, later) => {
      replays.push(later.length);
      return replayApprovalState(created, later);
    },
  });
  assert.deepStrictEqual(await projection.get("s"), folded(events));
  assert.deepStrictEqual(replays, [300], "one replay of every event the state folds");
  await log.append("s", {
    type: "approval/requested",
    payload: { request_id: "r-live", call: { id: "c9", name: "Bash", args: {} } },
  });
  const live = await projection.get("s");
  assert.equal(live?.byCall.get("c9"), "r-live");
  assert.deepStrictEqual(replays, [300], "the live event is folded, not replayed");
});
