/**
 * The `jobs` row's start-up report of lost jobs: a job is not durable, so one the log shows started but never ended
 * died with a previous process (or is running orphaned where that process left it). Each gets `job/ended`
 * (`lost`) and a notice, so it is never silently forgotten.
 *
 * @module
 */
import { EventLoopTurns, type Logger } from "@terret/hames";
import type { Sessions } from "@terret/core";
import type { JobOwner } from "./jobs.ts";
import {
  JobEnded,
  type JobEndedPayload,
  JobStarted,
  type JobStartedPayload,
} from "./job_events.ts";

/** What the report needs from the row. */
export interface LostJobsHost {
  readonly sessions: Sessions;
  readonly logger: Logger;
  /** True once the row is stopping: the report ends. */
  stopped(): boolean;
  /** True when this process started the session's job (it is not lost). */
  live(sessionId: string, jobId: string): boolean;
  /** Queues the notice for the session's agent. */
  notify(owner: JobOwner, text: string): Promise<void>;
}

/** The notice of a lost job. */
export function lostNotice(started: JobStartedPayload): string {
  return `job ${started.job_id} was lost when the host restarted (command: ${
    started.command.length > 200 ? `${started.command.slice(0, 200)}…` : started.command
  }; its output so far, if any, is in ${started.output_path})`;
}

/**
 * Appends `job/ended` (`lost`) and queues a notice for every unfinished job of every session. A session that
 * cannot be read or written is logged and skipped (it is reported at the next start). The event loop gets a turn
 * between sessions. Never rejects; resolves with how many jobs were reported.
 */
export async function reportLostJobs(host: LostJobsHost): Promise<number> {
  let ids: string[];
  try {
    // The sessions holding a job (or, when the store cannot tell, every session): each is read below.
    ids = await host.sessions.list({ types: [JobStarted.name] });
  } catch (error) {
    host.logger.log("warn", "Lost jobs were not reported at start: the store could not list", {
      error,
    });
    return 0;
  }
  let reported = 0;
  const turns = new EventLoopTurns();
  for (const [index, sessionId] of ids.entries()) {
    // The event loop gets a turn between sessions: a store's reads may settle without one (SQLite's do).
    if (index > 0) await turns.turn();
    if (host.stopped()) return reported;
    try {
      const events = await host.sessions.read(sessionId, {
        types: [JobStarted.name, JobEnded.name],
      });
      const open = new Map<string, JobStartedPayload>();
      for (const event of events) {
        const payload = event.payload as JobStartedPayload | JobEndedPayload;
        if (event.type === JobStarted.name) open.set(payload.job_id, payload as JobStartedPayload);
        else open.delete(payload.job_id);
      }
      if (open.size === 0) continue;
      const [created] = await host.sessions.read(sessionId, { to_seq: 1 });
      const agentId = (created?.payload as { meta?: { agent_id?: unknown } } | undefined)?.meta
        ?.agent_id;
      const owner = {
        agent_id: typeof agentId === "string" ? agentId : sessionId,
        session_id: sessionId,
      };
      for (const started of open.values()) {
        if (host.stopped()) return reported;
        if (host.live(sessionId, started.job_id)) continue;
        const ended: JobEndedPayload = {
          job_id: started.job_id,
          reason: "lost",
          code: null,
          signal: null,
          duration_ms: null,
        };
        await host.sessions.append(sessionId, { type: JobEnded.name, payload: ended });
        await host.notify(owner, lostNotice(started));
        reported++;
      }
    } catch (error) {
      if (host.stopped()) return reported;
      host.logger.log(
        "warn",
        `Lost jobs of session "${sessionId}" were not reported; retried at the next start`,
        {
          session_id: sessionId,
          error,
        },
      );
    }
  }
  return reported;
}
