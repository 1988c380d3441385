/**
 * The agent interface: an id, a session, one inbox, a status machine, steering and cancellation, and a forked
 * context that dies with it.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import type { Content } from "../sessions/events.ts";
import type { AgentStatus } from "./events.ts";

/** Options for {@linkcode Agent.inject}. */
export interface InjectOptions {
  /** Wake the agent (start a turn when idle) instead of waiting for a waking message (default false). */
  readonly wake?: boolean;
}

/** What {@linkcode Agent.enqueue} makes durable and queues. */
export interface QueuedInput {
  /** `message` (logged as `user/message` when claimed) or `steer` (as `context/injected`). */
  readonly kind: "message" | "steer";
  readonly content: Content;
  /** For a steer: wake an idle agent (default false). A message always wakes. */
  readonly wake?: boolean;
}

/** Options for {@linkcode Agent.enqueue}. */
export interface EnqueueOptions {
  readonly signal?: AbortSignal;
  /**
   * Called with the `input/queued` seq once it is durable and before the input is queued, so an acknowledgement
   * sent from it precedes every event of the claim. It must not throw.
   */
  readonly onDurable?: (seq: number) => void;
}

/** Options for {@linkcode Agent.idle}. */
export interface IdleOptions {
  /** Stops waiting (rejecting with the signal's reason); the agent is not affected. */
  readonly signal?: AbortSignal;
}

/**
 * A long-lived agent (made by the `agents` service).
 *
 * Status machine: `idle` → `running` when a turn starts (→ `waiting_approval` while a call waits on a human
 * verdict, → `running` again) → `idle` when it ends completed, cancelled or rejected, or `failed` when it failed;
 * a failed agent runs again on its next wake. `disposed` is final.
 *
 * Contract: `send` and `inject` validate the content at once (a `TerretError` `InvalidPayload` or
 * `PayloadTooLarge`, exactly as the log's append boundary would refuse it) and only queue it: nothing is logged
 * until a step claims it (a message as `user/message`, a steer as `context/injected`), so what the model sees is
 * always what the log holds. Input queued by `send`/`inject` when the process dies is lost (it was never logged);
 * input queued by `enqueue` is durable first (`input/queued`) and is queued again, once, whenever the agent is next
 * made resident (a restart, a rehydration after eviction) until a step claims it. A turn interrupted mid-step is
 * re-entered from the log on the next wake. All methods throw `AgentDisposed` once the agent is disposed.
 */
export interface Agent {
  /** The agent id (`[A-Za-z0-9][A-Za-z0-9_.-]{0,127}`). */
  readonly id: string;
  /** The durable session it drives (by default the same string as its id). */
  readonly session_id: string;
  /**
   * The agent's forked context: tools, prompt sections and listeners registered on it apply to this agent alone and
   * die with it; every extension point of its turns is dispatched on it.
   */
  readonly ctx: Context;
  /** The current status. */
  readonly status: AgentStatus;
  /** Items (messages and steers) waiting in the inbox. */
  readonly queued: number;
  /** Queues a user message and wakes the agent: a turn starts, or the running turn claims it at its next step. */
  send(content: Content): void;
  /**
   * Queues a steer, logged as `context/injected` at the next step boundary. Without `wake` it waits for a waking
   * message (or the running turn's next step); with `wake` an idle agent starts a turn for it.
   */
  inject(content: Content, options?: InjectOptions): void;
  /**
   * Makes a message or steer durable (`input/queued`), then queues it like `send`/`inject`; resolves with the
   * `input/queued` seq once it is durable (an acknowledgement may be given then), and rejects with nothing queued
   * when it is invalid or the append fails. The claiming `user/message`/`context/injected` carries `queued_seq`.
   */
  enqueue(input: QueuedInput, options?: EnqueueOptions): Promise<number>;
  /**
   * Cancels the running turn: its model stream closes, its running tools are signalled, and it ends with
   * `turn/end` status `cancelled`. Queued input stays queued but does not wake the agent until the next `send`,
   * waking `inject` or `wake`. Returns false when no turn was running.
   */
  cancel(reason?: string): boolean;
  /**
   * Starts a turn when one is owed: waking input is queued (a hold after a cancel is released), or the log holds
   * an open turn to re-enter. Returns true when a turn is running or starting.
   */
  wake(): boolean;
  /** Resolves once no turn is running or starting. */
  idle(options?: IdleOptions): Promise<void>;
  /** Reports a call of the running turn waiting on (true) or back from (false) a human verdict. */
  setWaitingApproval(waiting: boolean): void;
}
