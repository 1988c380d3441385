/**
 * The agent implementation behind {@linkcode Agent}: the inbox, the status machine and the turn pump that hands
 * turns to the driver one at a time. Internal to the agents service.
 *
 * @module
 */
import type { Context, Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { Content } from "../sessions/events.ts";
import { ContextInjected, UserMessage } from "../sessions/events.ts";
import { schemaIssues } from "../sessions/_fast_checks.ts";
import type { Sessions } from "../sessions/sessions.ts";
import type { Agent, EnqueueOptions, IdleOptions, InjectOptions, QueuedInput } from "./agent.ts";
import {
  AGENT_SHUTDOWN,
  type Driver,
  type OpenTurn,
  TURN_CANCELLED,
  type TurnOutcome,
  type TurnRun,
} from "./driver.ts";
import type { AgentStatus, AgentStatusChangedPayload } from "./events.ts";
import { Inbox } from "./inbox.ts";
import { findOpenTurn } from "./open_turn.ts";
import { type PendingInput, readPendingInput } from "./pending_input.ts";
import type { AgentLeases } from "./agent_leases.ts";
import { LeaseKeeper } from "./_lease_keeper.ts";

/** What an agent needs from the service that made it. */
export interface AgentHost {
  readonly sessions: Sessions;
  readonly logger: Logger;
  /** The driver mounted now, if any. */
  driver(): Driver | undefined;
  /** Reports a status change. */
  statusChanged(payload: AgentStatusChangedPayload): void;
  /** The millisecond clock least-recently-used eviction reads. */
  clock(): number;
  /** The lease provider when several processes share the store (none: the agent runs unleased). */
  readonly leases?: AgentLeases | undefined;
  /** Reports that the agent lost its lease (another node holds it now): the host stops and disposes it. */
  leaseLost?(agent: AgentHandle, error: TerretError): void;
}

/** An agent (see {@linkcode Agent}). */
export class AgentHandle implements Agent {
  readonly id: string;
  readonly session_id: string;
  readonly ctx: Context;
  readonly #host: AgentHost;
  readonly #inbox = new Inbox();
  #status: AgentStatus = "idle";
  /** The open turn in the log: known open, known closed (`undefined`), or to be read (`"unknown"`). */
  #open: OpenTurn | undefined | "unknown";
  #pump: Promise<void> | undefined;
  #controller: AbortController | undefined;
  #stopping = false;
  #idleWaiters: (() => void)[] = [];
  /** `enqueue` calls whose append is in flight: the agent is not idle while one is. */
  #enqueuing = 0;
  /** The clock reading of the last use (a verb, a turn's end), for least-recently-used eviction. */
  #usedAt: number;
  readonly #clock: () => number;
  /** The agent's lease when the store is shared by several processes. */
  readonly #keeper: LeaseKeeper | undefined;
  /** The next attempt to acquire a lease another node holds. */
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** A wake arrived while the pump ran, after it last looked at the inbox. */
  #again = false;
  /**
   * Every `input/queued` at or below this seq is claimed in the log: reads of its queued input (a leased agent's at
   * each acquire and renewal, the registry's as it leaves memory) start after it, so each costs the input since the
   * last, not the session's whole history.
   */
  #settled: number;

  /**
   * @param pending the log's unclaimed input when the agent was made resident (queued again in its inbox)
   * @param settled a seq at or below which every `input/queued` of the session is claimed (that read's `settled`)
   */
  constructor(
    id: string,
    sessionId: string,
    ctx: Context,
    host: AgentHost,
    open: OpenTurn | undefined,
    pending: readonly PendingInput[] = [],
    settled = 0,
  ) {
    this.#settled = settled;
    this.id = id;
    this.session_id = sessionId;
    this.ctx = ctx;
    this.#host = host;
    this.#open = open;
    this.#clock = host.clock;
    this.#usedAt = host.clock();
    for (const item of pending) this.#inbox.push(item.kind, item.content, item.wake, item.seq);
    this.#keeper = host.leases === undefined ? undefined : new LeaseKeeper(
      host.leases,
      sessionId,
      host.logger,
      (error) => host.leaseLost?.(this, error),
      // While a turn runs, input queued on other nodes is read at each renewal, for the turn's next step.
      () => void this.#syncPending(),
    );
  }

  /** The fencing token of the lease held now (undefined when unleased or not held). */
  get leaseToken(): number | undefined {
    return this.#keeper?.held === true ? this.#keeper.token : undefined;
  }

  /**
   * A seq at or below which every `input/queued` of the session is claimed in the log (claims are never undone, so it
   * stays true): where a later read of its queued input may start.
   */
  get settledSeq(): number {
    return this.#settled;
  }

  /** The clock reading of the last use. */
  get usedAt(): number {
    return this.#usedAt;
  }

  /** Marks the agent used now (a connection, a frame). */
  touch(): void {
    this.#usedAt = this.#clock();
  }

  /**
   * True when the agent may be evicted: no turn running or starting, nothing queued or being queued, no open turn
   * known in the log, and not disposed.
   */
  get evictable(): boolean {
    return this.#pump === undefined && this.#enqueuing === 0 && this.#inbox.size === 0 &&
      this.#open === undefined && !this.#stopping && this.#status !== "disposed";
  }

  get status(): AgentStatus {
    return this.#status;
  }

  get queued(): number {
    return this.#inbox.size;
  }

  /** True while a turn runs or is starting. */
  get busy(): boolean {
    return this.#pump !== undefined;
  }

  /** The open turn known from the log (`"unknown"` until read again after a turn left open). */
  get openTurn(): OpenTurn | undefined | "unknown" {
    return this.#open;
  }

  send(content: Content): void {
    this.#assertLive("send a message");
    this.#check("user/message", content);
    this.touch();
    this.#inbox.push("message", content, true);
    this.#kick();
  }

  inject(content: Content, options: InjectOptions = {}): void {
    this.#assertLive("inject context");
    this.#check("context/injected", content);
    this.touch();
    this.#inbox.push("steer", content, options.wake === true);
    if (options.wake === true) this.#kick();
  }

  async enqueue(input: QueuedInput, options: EnqueueOptions = {}): Promise<number> {
    this.#assertLive(input.kind === "message" ? "queue a message" : "queue a steer");
    const type = input.kind === "message" ? "user/message" : "context/injected";
    this.#check(type, input.content);
    const wake = input.kind === "message" || input.wake === true;
    this.#enqueuing++;
    this.touch();
    let seq: number;
    try {
      const event = await this.#host.sessions.append(
        this.session_id,
        { type: "input/queued", payload: { kind: input.kind, content: input.content, wake } },
        options.signal === undefined ? {} : { signal: options.signal },
      );
      seq = event.seq;
    } finally {
      this.#enqueuing--;
    }
    options.onDurable?.(seq);
    // Disposed while the append ran: the input is durable and is queued again when the agent is next resident.
    if (this.#stopping) return seq;
    this.#inbox.push(input.kind, input.content, wake, seq);
    if (wake) this.#kick();
    return seq;
  }

  cancel(reason = "cancelled"): boolean {
    this.#assertLive("cancel");
    const controller = this.#controller;
    if (controller === undefined || controller.signal.aborted) return false;
    this.#inbox.hold();
    controller.abort(new TerretError(TURN_CANCELLED, String(reason)));
    return true;
  }

  wake(): boolean {
    this.#assertLive("wake");
    this.#inbox.release();
    return this.#kick();
  }

  idle(options: IdleOptions = {}): Promise<void> {
    if (this.#pump === undefined) return Promise.resolve();
    const signal = options.signal;
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.#idleWaiters = this.#idleWaiters.filter((waiter) => waiter !== done);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#idleWaiters.push(done);
    });
  }

  setWaitingApproval(waiting: boolean): void {
    this.#assertLive("report an approval wait");
    if (this.#pump === undefined) {
      throw new TerretError(
        "AgentIdle",
        `Cannot report agent "${this.id}" waiting on approval: no turn is running`,
      );
    }
    this.#setStatus(waiting ? "waiting_approval" : "running");
  }

  /**
   * Takes the agent over from a node that died holding its lease: acquires the lease (retrying while it is held),
   * reads the log again, resumes its open turn and runs its unclaimed input, then releases the lease. Without a lease
   * provider it does nothing.
   */
  adopt(): void {
    if (this.#keeper === undefined || this.#stopping || this.#status === "disposed") return;
    this.#kick(true);
  }

  /** Stops the agent for good: aborts a running turn as a shutdown (left open in the log) and waits for it. */
  async stop(why = "the agents service is stopping"): Promise<void> {
    this.#stopping = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#controller?.abort(new TerretError(AGENT_SHUTDOWN, `Agent "${this.id}" stopped: ${why}`));
    await this.#pump;
  }

  /** Marks the agent disposed (after `stop`, or when idle); drops whatever is queued. */
  markDisposed(): void {
    this.#stopping = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#inbox.clear();
    this.#setStatus("disposed");
  }

  #assertLive(action: string): void {
    if (this.#status === "disposed" || this.#stopping) {
      throw new TerretError(
        "AgentDisposed",
        `Cannot ${action} for agent "${this.id}": it is disposed`,
        { details: { agent_id: this.id } },
      );
    }
  }

  #check(type: "user/message" | "context/injected", content: Content): void {
    const normalized = this.#host.sessions.normalize(type, { content });
    const issues = schemaIssues(
      type === "user/message" ? UserMessage : ContextInjected,
      normalized.value,
    );
    if (issues !== undefined) {
      throw new TerretError(
        "InvalidPayload",
        `Cannot queue "${type}" for agent "${this.id}": the payload breaks its schema: ${issues}`,
        { details: { type } },
      );
    }
  }

  /** Starts the pump when a turn is owed and none runs; true when one runs or starts. */
  #kick(force = false): boolean {
    if (this.#pump !== undefined) {
      this.#again = true;
      return true;
    }
    if (this.#stopping || (!force && !this.#inbox.waking && this.#open === undefined)) return false;
    this.#pump = this.#runTurns().finally(() => {
      this.#pump = undefined;
      this.#usedAt = this.#clock();
      // Input that arrived after the pump last looked (while it released the lease) starts it again.
      const again = this.#again;
      this.#again = false;
      if (again && this.#kick()) return;
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    });
    return true;
  }

  async #runTurns(): Promise<void> {
    try {
      await this.#runHeld();
    } finally {
      await this.#keeper?.release();
    }
  }

  /**
   * With a lease provider: acquires the lease before anything else (another node's turns may have written since
   * this agent last looked, so the open turn and the durable input are read again under the new grant). While
   * another node holds it, the input stays durable in the log and an attempt is made again every third of the ttl
   * until the holder claimed it or the lease is free (an expired holder's open turn is resumed here).
   */
  async #acquire(): Promise<boolean> {
    const keeper = this.#keeper!;
    let acquired: boolean;
    try {
      acquired = await keeper.acquire();
    } catch (error) {
      this.#host.logger.log("error", `Agent "${this.id}" could not acquire its lease`, {
        agent_id: this.id,
        session_id: this.session_id,
        error,
      });
      acquired = false;
    }
    if (this.#stopping) return false;
    if (acquired) {
      this.#open = "unknown";
      await this.#syncPending();
      return true;
    }
    this.#retry ??= setTimeout(() => {
      this.#retry = undefined;
      if (!this.#stopping) void this.#syncPending().then(() => this.#kick());
    }, keeper.retryMs);
    return false;
  }

  /** Aligns the inbox's durable items with the log's unclaimed input (another node may have claimed or queued some). */
  async #syncPending(): Promise<void> {
    try {
      const { pending, through, settled } = await readPendingInput(
        this.#host.sessions,
        this.session_id,
        { after: this.#settled },
      );
      // Reads that overlap may end in any order: the watermark only moves forward.
      this.#settled = Math.max(this.#settled, settled);
      if (!this.#stopping) this.#inbox.sync(pending, through, this.#settled);
    } catch (error) {
      this.#host.logger.log("error", `Agent "${this.id}" could not read its queued input`, {
        agent_id: this.id,
        session_id: this.session_id,
        error,
      });
    }
  }

  async #runHeld(): Promise<void> {
    for (;;) {
      this.#again = false;
      if (this.#keeper !== undefined && !this.#keeper.held && !(await this.#acquire())) return;
      if (this.#open === "unknown") {
        try {
          this.#open = await findOpenTurn(this.#host.sessions, this.session_id);
        } catch (error) {
          this.#host.logger.log("error", `Agent "${this.id}" could not read its log to resume`, {
            agent_id: this.id,
            session_id: this.session_id,
            error,
          });
          return;
        }
      }
      if (this.#stopping) return;
      if (!this.#inbox.waking && this.#open === undefined) {
        if (this.#keeper === undefined) return;
        // Input another node queued while this one held the lease is this holder's to claim before letting go.
        await this.#syncPending();
        if (this.#stopping || !this.#inbox.waking) return;
      }
      const driver = this.#host.driver();
      if (driver === undefined) {
        this.#host.logger.log(
          "warn",
          `Agent "${this.id}" has input but no driver is mounted (service "loop"); it waits for the next wake`,
          { agent_id: this.id, session_id: this.session_id },
        );
        return;
      }
      const outcome = await this.#runOne(driver);
      if (this.#stopping) return;
      if (!outcome.closed) {
        this.#open = "unknown";
        return;
      }
      this.#open = undefined;
    }
  }

  async #runOne(driver: Driver): Promise<TurnOutcome> {
    const controller = new AbortController();
    this.#controller = controller;
    this.#setStatus("running");
    const inbox = this.#inbox;
    const resume = this.#open === "unknown" ? undefined : this.#open;
    const run: TurnRun = {
      agent: this,
      signal: controller.signal,
      resume,
      claim: () => inbox.claim(),
      get hasInput() {
        return inbox.waking;
      },
      setStatus: (status) => {
        if (this.#controller === controller) this.#setStatus(status);
      },
    };
    let outcome: TurnOutcome;
    try {
      outcome = await driver.runTurn(run);
    } catch (error) {
      this.#host.logger.log("error", `The driver failed running a turn of agent "${this.id}"`, {
        agent_id: this.id,
        session_id: this.session_id,
        error,
      });
      outcome = {
        status: "failed",
        steps: 0,
        closed: false,
        error: { code: "DriverFailed", message: "The driver failed (see the host's log)" },
      };
    } finally {
      this.#controller = undefined;
    }
    if (!this.#stopping) this.#setStatus(outcome.status === "failed" ? "failed" : "idle");
    return outcome;
  }

  #setStatus(status: AgentStatus): void {
    const previous = this.#status;
    if (previous === status || previous === "disposed") return;
    this.#status = status;
    this.#host.statusChanged({
      agent_id: this.id,
      session_id: this.session_id,
      status,
      previous,
    });
  }
}
