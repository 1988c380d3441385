/**
 * The agents service's start-up recovery of acknowledged input: every session holding `input/queued` that no
 * claim names gets its agent made resident, so that input is claimed without waiting for a client.
 *
 * @module
 */
import { EventLoopTurns, type Logger } from "@terret/hames";
import { SESSION_ID_PATTERN } from "../sessions/envelope.ts";
import type { Sessions } from "../sessions/sessions.ts";
import { findPendingInput } from "./pending_input.ts";

/** What the recovery needs from the agents service. */
export interface RecoveryHost {
  readonly sessions: Sessions;
  readonly logger: Logger;
  /** True once the service is stopping: the recovery ends. */
  stopped(): boolean;
  /** True when the agent is resident or being made resident. */
  resident(agentId: string): boolean;
  /**
   * Resolves `true` once the host has settled (every row started: the driver's row mounts after the agents row), or
   * `false` when the service stops first.
   */
  settled(): Promise<boolean>;
  /** True when a driver is mounted. */
  driverReady(): boolean;
  /** Makes the agent resident (which queues its unclaimed input again and wakes it). */
  ensure(agentId: string): Promise<unknown>;
}

/**
 * Recovers queued input across the sessions the store lists as holding some (`list({ types })`). Only sessions an agent of the same id drives (meta
 * `agent_id` equal to the session id) are recovered; a session that cannot be (every resident agent busy, a store
 * failure) is logged and left to the agent's next use. The event loop gets a turn between sessions. Never rejects.
 */
export async function recoverQueuedInput(host: RecoveryHost): Promise<void> {
  if (!(await host.settled()) || host.stopped()) return;
  if (!host.driverReady()) {
    host.logger.log("warn", "Queued input was not recovered at start: no driver was mounted");
    return;
  }
  let ids: string[];
  try {
    // The sessions holding queued input (or, when the store cannot tell, every session): each is read below.
    ids = await host.sessions.list({ types: ["input/queued"] });
  } catch (error) {
    host.logger.log("warn", "Queued input was not recovered at start: the store could not list", {
      error,
    });
    return;
  }
  const turns = new EventLoopTurns();
  for (const [index, sessionId] of ids.entries()) {
    // The event loop gets a turn between sessions: a store's reads may settle without one (SQLite's do), and a
    // sweep of thousands of sessions would otherwise hold every socket and agent until it ends.
    if (index > 0) await turns.turn();
    if (host.stopped()) return;
    if (host.resident(sessionId) || !SESSION_ID_PATTERN.test(sessionId)) continue;
    try {
      if ((await findPendingInput(host.sessions, sessionId)).length === 0) continue;
      const [created] = await host.sessions.read(sessionId, { to_seq: 1 });
      const meta = (created?.payload as { meta?: { agent_id?: unknown } } | undefined)?.meta;
      if (meta?.agent_id !== sessionId) continue;
      await host.ensure(sessionId);
      host.logger.log("info", `Agent "${sessionId}" was made resident to claim its queued input`, {
        agent_id: sessionId,
      });
    } catch (error) {
      if (host.stopped()) return;
      host.logger.log(
        "warn",
        `Agent "${sessionId}" could not be made resident to claim its queued input; it is claimed on its next use`,
        { agent_id: sessionId, error },
      );
    }
  }
}
