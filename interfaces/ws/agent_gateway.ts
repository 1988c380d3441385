/**
 * The agent side the socket drives: resolve-or-create an agent and its durable session, then steer it. The socket
 * never appends model-visible input itself; every steering frame lands on this seam.
 *
 * @module
 */
import { TerretError } from "./errors.ts";
import type { Agent, Agents, Approvals } from "@terret/core";
import type { ApprovalAnswerer, Content } from "@terret/core/sessions";

/** Options carrying only a signal. */
export interface GatewaySignal {
  readonly signal?: AbortSignal;
}

/** Options for {@linkcode AgentLink.steer}. */
export interface SteerOptions extends GatewaySignal {
  /** Start a turn when the agent is idle (`true`), or wait for the running one or the next waking message. */
  readonly wake: boolean;
}

/**
 * One agent as the socket sees it: its ids and the verbs the client frames map to.
 *
 * Contract: a link is a handle, not a lease. The socket drops it without telling when its connection ends, and
 * nothing about the agent (its turn, its inbox) may depend on the link or the connection still existing.
 * `message` and `steer` resolve once the content is accepted into the agent's inbox, never waiting for the turn;
 * `cancel` is cooperative and idempotent (with no turn running it does nothing). Each rejects with a
 * `TerretError` naming why when it cannot accept the request, and then nothing was queued.
 */
export interface AgentLink {
  /** The agent's id (as in the URL). */
  readonly agentId: string;
  /** The agent's durable session. */
  readonly sessionId: string;
  /** Queues a user message and wakes the agent. */
  message(content: Content, options?: GatewaySignal): Promise<void>;
  /** Queues context for the next step boundary (`context/injected`). */
  steer(content: Content, options: SteerOptions): Promise<void>;
  /** Asks the running turn to stop; it ends `cancelled`. */
  cancel(reason: string | undefined, options?: GatewaySignal): Promise<void>;
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

/**
 * Resolves agents for the socket.
 *
 * Contract: `open` resolves the agent with this id, creating it and its durable session on first contact, and
 * finds the same agent and session again after a restart of the process. It is only ever called after the
 * connection is authorized for this id. It rejects with a `TerretError` when the agent cannot be had (an agent
 * cap, a store failure); the socket then answers `503` with the error's code.
 */
export interface AgentGateway {
  /** Resolves (or creates) the agent. */
  open(agentId: string, options?: GatewaySignal): Promise<AgentLink>;
}

/**
 * The gateway over the `agents` service: `open` is `agents.ensure(id)` (resolve-or-create, surviving restarts);
 * each verb re-resolves the live agent, so a link outlives the agent being disposed and re-created in between.
 * `message` is `agent.send` (a wake: an open turn left in the log by a restart is re-entered first), `steer` is
 * `agent.inject`, `cancel` is `agent.cancel` on the live agent only (cancelling an agent that is not live is a
 * no-op and creates nothing), `approve` is `approvals.answer` on the agent's session (present when an approvals
 * row is mounted; the service wakes the agent when no live call waits, so a turn parked before a restart resumes).
 */
export function agentsGateway(
  agents: Agents,
  approvals: () => Approvals | undefined = () => undefined,
): AgentGateway {
  const live = async (agentId: string): Promise<Agent> =>
    agents.get(agentId) ?? await agents.ensure(agentId);
  return {
    async open(agentId, options = {}) {
      const agent = await agents.ensure(
        agentId,
        options.signal === undefined ? {} : { signal: options.signal },
      );
      return {
        agentId,
        sessionId: agent.session_id,
        async message(content) {
          (await live(agentId)).send(content);
        },
        async steer(content, { wake }) {
          (await live(agentId)).inject(content, { wake });
        },
        cancel(reason) {
          const agent = agents.get(agentId);
          if (reason === undefined) agent?.cancel();
          else agent?.cancel(reason);
          return Promise.resolve();
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
          await service.answer(agent.session_id, requestId, {
            decision: answer.decision,
            by: answer.by,
            ...(answer.reason === undefined ? {} : { reason: answer.reason }),
            remember: answer.remember,
          });
        },
      };
    },
  };
}
