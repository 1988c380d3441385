/**
 * The default subagent provider (`provider: agent`): a fresh child agent in this host, on the child's session,
 * running one turn under the type's role, model and step limit.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { AgentsKey } from "../agents/agents.ts";
import { AgentPreStep, AgentRequest } from "../loop/events.ts";
import { findOpenTurn } from "../agents/open_turn.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import type { ChildSpec, SubagentProvider } from "./subagents.ts";

/**
 * Creates the `agent` provider on `ctx` (the subagents row's context: it resolves `agents` and `sessions` there).
 *
 * The child agent is made on its session (which the seam created), its requests are routed to the type's `role`
 * (and `model`, when set) by an `agent/request` listener on its fork, and a step past the type's `max_steps` is
 * rejected by an `agent/pre_step` listener (the turn ends `rejected`). The prompt is sent (or, for a resumed call
 * whose child left its turn open, the open turn is re-entered), the provider waits for the agent to be idle and then
 * disposes it. An abort of `spec.signal` cancels the child's turn, also when it aborts before the turn started.
 */
export function agentProvider(ctx: Context): SubagentProvider {
  return {
    async run(spec: ChildSpec): Promise<void> {
      const agents = ctx.get(AgentsKey);
      const sessions = ctx.get(SessionsKey);
      const { type, signal } = spec;
      const child = await agents.create({ agent_id: spec.child_id, signal });
      const why = (): string => {
        const reason = signal.reason;
        return reason instanceof Error ? reason.message : String(reason);
      };
      const onAbort = (): void => void child.cancel(why());
      try {
        child.ctx.on(AgentRequest, (payload, next) =>
          next({
            ...payload,
            role: type.role,
            request: type.model === undefined
              ? payload.request
              : { ...payload.request, model: type.model },
          }));
        child.ctx.on(AgentPreStep, (payload, next) => {
          // An abort that came before the turn had a controller: cancel now, the step's checkpoint ends it.
          if (signal.aborted) child.cancel(why());
          if (payload.step > type.max_steps) {
            return Promise.resolve({
              reject: `the subagent type "${type.name}" allows at most ${type.max_steps} step` +
                (type.max_steps === 1 ? "" : "s"),
            });
          }
          return next();
        });
        signal.addEventListener("abort", onAbort, { once: true });
        const open = spec.resumed ? await findOpenTurn(sessions, spec.child_id) : undefined;
        if (!signal.aborted) {
          if (open !== undefined) child.wake();
          else child.send(spec.prompt);
        }
        await child.idle();
      } finally {
        signal.removeEventListener("abort", onAbort);
        await child.idle();
        if (agents.get(spec.child_id) === child) await agents.disposeAgent(spec.child_id);
      }
    },
  };
}
