/**
 * The driver seam (service key `loop`): what runs an agent's turns. The default driver is the loop
 * (`core/loop`); a research harness mounts another plugin under the same key and every tool, adapter, store and
 * interface keeps working.
 *
 * @module
 */
import { type Context, defineService, type ServiceKey } from "@terret/hames";
import type { InputItem, TurnStatus } from "../loop/events.ts";
import type { Agent } from "./agent.ts";

/** An open turn found in the log: a `turn/start` with no `turn/end` after it (a crash, a restart, a shutdown). */
export interface OpenTurn {
  /** The seq of the open turn's `turn/start`. */
  readonly turn_start_seq: number;
}

/** The error code of a cancelled turn's abort reason (`agent.cancel(reason)`). */
export const TURN_CANCELLED = "TurnCancelled";
/** The error code of the abort reason when the agents service stops: the driver leaves the turn open. */
export const AGENT_SHUTDOWN = "AgentShutdown";

/** What a driver is handed for one turn. */
export interface TurnRun {
  /** The agent: its id, session and forked context (dispatch every extension point on `agent.ctx`). */
  readonly agent: Agent;
  /**
   * Aborted by `agent.cancel(reason)` (the reason is a `TerretError` with code {@linkcode TURN_CANCELLED}: end the
   * turn `cancelled`) or when the agents service stops (code {@linkcode AGENT_SHUTDOWN}: stop at once and append
   * nothing more, leaving the turn open for a later resume).
   */
  readonly signal: AbortSignal;
  /** The open turn to re-enter instead of opening one, when the log holds one. */
  readonly resume: OpenTurn | undefined;
  /** Takes the step's input from the inbox: every pending steer and at most one message, in arrival order. */
  claim(): InputItem[];
  /** True while waking input (a message, or a steer sent with `wake`) waits in the inbox. */
  readonly hasInput: boolean;
  /** Reports the agent waiting on (or back from) a human verdict. */
  setStatus(status: "running" | "waiting_approval"): void;
}

/** How a driver's turn ended. */
export interface TurnOutcome {
  /** The `turn/end` status (or the status it would have had, for a turn left open). */
  readonly status: TurnStatus;
  /** Steps run in this call (a resumed turn counts only the ones run after re-entering). */
  readonly steps: number;
  /** True when the turn's `turn/end` is durable; false when the driver stopped with the turn still open. */
  readonly closed: boolean;
  /** Why the turn failed, was cancelled or rejected (never a secret). */
  readonly error?: { readonly code: string; readonly message: string };
}

/**
 * A driver: runs one turn of an agent to its end.
 *
 * Contract: the agents service calls `runTurn` for one agent at a time (never two turns of an agent at once). The
 * driver claims input only through `run.claim()`, dispatches its extension points on `run.agent.ctx`, writes only
 * durable events through the sessions service, and resolves when the turn is closed (`turn/end` durable) or, on
 * shutdown, abandoned open. It resolves rather than rejects for turn failures (a model error, a throwing listener),
 * reporting them in the outcome and the log; a rejection is a driver bug, which the agents service reports and
 * treats as a failed turn left open.
 */
export interface Driver {
  /** Runs one turn to its end. */
  runTurn(run: TurnRun): Promise<TurnOutcome>;
}

/** The driver's service key (`loop`). */
export const LoopKey: ServiceKey<Driver> = defineService<Driver>(
  "loop",
  "The agent driver: runs an agent's turns (the default is the loop; another plugin may replace it)",
);

/** What the agents service needs from its context to reach the driver at wake time. */
export function driverOf(ctx: Context): Driver | undefined {
  return ctx.maybe(LoopKey);
}
