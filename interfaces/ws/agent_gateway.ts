/**
 * The agent side the socket drives: resolve an agent (rehydrating it from the log, or deferring a new one's session
 * until the first frame that needs it), then steer it. The socket never appends model-visible input itself; every
 * steering frame lands on this seam.
 *
 * @module
 */
import { TerretError } from "./errors.ts";
import { type Agent, type Agents, type Approvals, CORE_ERRORS, type Sessions } from "@terret/core";
import type { AgentStatus, EnqueueOptions } from "@terret/core/agents";
import type { ApprovalAnswerer, Content } from "@terret/core/sessions";

/** Options carrying only a signal. */
export interface GatewaySignal {
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode AgentGateway.open}. */
export interface GatewayOpenOptions extends GatewaySignal {
  /**
   * Called right before a new durable session would be created for this link (the first frame that needs it);
   * throwing refuses the frame and creates nothing. The socket counts per-token quotas here.
   */
  readonly admit?: () => void;
}

/** Options for {@linkcode AgentLink.message}. */
export interface MessageOptions extends GatewaySignal {
  /** Called once the input is durable and before it can be claimed (the socket acks here). Must not throw. */
  readonly durable?: () => void;
}

/** Options for {@linkcode AgentLink.steer}. */
export interface SteerOptions extends MessageOptions {
  /** Start a turn when the agent is idle (`true`), or wait for the running one or the next waking message. */
  readonly wake: boolean;
}

/**
 * One agent as the socket sees it: its ids and the verbs the client frames map to.
 *
 * Contract: a link is a handle, not a lease. The socket drops it without telling when its connection ends, and
 * nothing about the agent (its turn, its inbox) may depend on the link or the connection still existing.
 * `message` and `steer` resolve once the content is **durable** (an `input/queued` event) and queued, never waiting
 * for the turn, so an ack after them survives a kill -9. `ready` makes sure the agent and its session exist (the
 * first frame that needs the session calls it; until then a link creates nothing durable). `cancel` is
 * cooperative and idempotent (with no turn running it does nothing, and it makes nothing resident); `dispose`
 * evicts the agent when it is resident and idle (its session stays). Each rejects with a `TerretError` naming why
 * when it cannot accept the request, and then nothing was queued.
 */
export interface AgentLink {
  /** The agent's id (as in the URL). */
  readonly agentId: string;
  /** The agent's durable session (it may not exist yet: see `ready`). */
  readonly sessionId: string;
  /** Makes the agent resident, creating its durable session when the log does not hold it. */
  ready(options?: GatewaySignal): Promise<void>;
  /** Queues a user message durably and wakes the agent. */
  message(content: Content, options?: MessageOptions): Promise<void>;
  /** Queues context durably for the next step boundary (`context/injected`). */
  steer(content: Content, options: SteerOptions): Promise<void>;
  /** Asks the running turn to stop; it ends `cancelled`. */
  cancel(reason: string | undefined, options?: GatewaySignal): Promise<void>;
  /** Evicts the agent when it is resident and idle (`AgentBusy` while a turn runs); a no-op when not resident. */
  dispose(options?: GatewaySignal): Promise<void>;
  /**
   * Answers an open approval request of this agent's session (absent when approvals are not enabled). Rejects with
   * the approvals service's `TerretError` (`UnknownRequest`, `AlreadyResolved`, `InvalidDecision`,
   * `CannotRemember`), and then nothing was appended.
   */
  approve?(requestId: string, answer: LinkAnswer, options?: GatewaySignal): Promise<void>;
}

/** An answer as the socket passes it on. */
export interface LinkAnswer {
  readonly decision: "allow" | "deny";
  readonly reason: string | undefined;
  readonly remember: boolean;
  /** Who answers: `{kind: "client", id}` with the token's public id. */
  readonly by: ApprovalAnswerer;
}

/** What the socket reports about one agent (`GET /v1/agents`). */
export interface AgentState {
  /** The agent's status while resident; `idle` when it is not. */
  readonly status: AgentStatus;
  /** True while the agent is in memory. */
  readonly resident: boolean;
}

/** The agents' figures, for `/healthz`. */
export interface AgentFigures {
  readonly resident: number;
  /** Resident agents that cannot be evicted (a turn running, input queued). */
  readonly busy: number;
  readonly max: number;
}

/**
 * Resolves agents for the socket.
 *
 * Contract: `open` resolves the agent with this id without creating anything durable: an agent whose session the
 * log holds is made resident (rehydrated, re-queuing its unclaimed input); for a new id the session is created only
 * by the link's `ready` (after `admit`). It finds the same agent and session again after a restart of the process.
 * It is only ever called after the connection is authorized for this id. It rejects with a `TerretError` when the
 * agent cannot be had (every resident agent busy, a store failure); the socket then answers `503` with the error's
 * code. `state` and `figures` are synchronous reads of memory only.
 */
export interface AgentGateway {
  /** Resolves the agent (see the contract). */
  open(agentId: string, options?: GatewayOpenOptions): Promise<AgentLink>;
  /** The agent's state as far as memory knows. */
  state(agentId: string): AgentState;
  /** The resident and busy counts and the cap. */
  figures(): AgentFigures;
}

/**
 * The gateway over the `agents` service: `open` is `agents.ensure(id)` when the log holds the agent's session
 * (rehydrating it), else a deferred link whose `ready` calls `admit` then `ensure`. Each verb re-resolves the
 * resident agent (`ensure`), so a link outlives the agent being evicted and rehydrated in between. `message` and
 * `steer` are `agent.enqueue` (durable first); `cancel` is `agent.cancel` on the resident agent only; `dispose` is
 * `agents.disposeAgent` on the resident agent only; `approve` is `approvals.answer` on the agent's session (present
 * when an approvals row is mounted; the service wakes the agent when no live call waits, so a turn parked before a
 * restart resumes).
 */
export function agentsGateway(
  agents: Agents,
  sessions: Sessions,
  approvals: () => Approvals | undefined = () => undefined,
): AgentGateway {
  return {
    async open(agentId, options = {}) {
      const signal = options.signal === undefined ? {} : { signal: options.signal };
      let sessionId = agents.get(agentId)?.session_id;
      if (sessionId === undefined && await sessions.head(agentId, signal) > 0) {
        sessionId = (await agents.ensure(agentId, signal)).session_id;
      }
      let known = sessionId !== undefined;
      const resolve = async (verbSignal?: AbortSignal): Promise<Agent> => {
        const resident = agents.get(agentId);
        if (resident !== undefined) return resident;
        if (!known && await sessions.head(agentId) === 0) options.admit?.();
        known = true;
        return await agents.ensure(agentId, verbSignal === undefined ? {} : { signal: verbSignal });
      };
      return {
        agentId,
        sessionId: sessionId ?? agentId,
        async ready(verb = {}) {
          await resolve(verb.signal);
        },
        async message(content, verb = {}) {
          const agent = await resolve(verb.signal);
          await agent.enqueue({ kind: "message", content }, enqueueOptions(verb));
        },
        async steer(content, verb) {
          const agent = await resolve(verb.signal);
          await agent.enqueue({ kind: "steer", content, wake: verb.wake }, enqueueOptions(verb));
        },
        cancel(reason) {
          const agent = agents.get(agentId);
          if (reason === undefined) agent?.cancel();
          else agent?.cancel(reason);
          return Promise.resolve();
        },
        async dispose(verb = {}) {
          if (agents.get(agentId) === undefined) return;
          try {
            await agents.disposeAgent(
              agentId,
              verb.signal === undefined ? {} : { signal: verb.signal },
            );
          } catch (error) {
            // Evicted meanwhile: the outcome asked for.
            if (CORE_ERRORS.is(error, "AgentNotFound")) return;
            throw error;
          }
        },
        async approve(requestId: string, answer: LinkAnswer) {
          const service = approvals();
          if (service === undefined) {
            throw new TerretError(
              "ApprovalsDisabled",
              `Cannot answer approval request "${requestId}": approvals are not enabled on this server ` +
                "(config row approvals)",
            );
          }
          await service.answer(sessionId ?? agentId, requestId, {
            decision: answer.decision,
            by: answer.by,
            ...(answer.reason === undefined ? {} : { reason: answer.reason }),
            remember: answer.remember,
          });
        },
      };
    },
    state(agentId) {
      const agent = agents.get(agentId);
      return agent === undefined
        ? { status: "idle", resident: false }
        : { status: agent.status, resident: true };
    },
    figures() {
      return { resident: agents.count, busy: agents.busyCount, max: agents.maxAgents };
    },
  };
}

function enqueueOptions(verb: MessageOptions): EnqueueOptions {
  const durable = verb.durable;
  return {
    ...(verb.signal === undefined ? {} : { signal: verb.signal }),
    ...(durable === undefined ? {} : { onDurable: () => durable() }),
  };
}
