/**
 * The subagents service (plugin `terret-subagents`, row `subagents`): the seam's checks and bookkeeping around a
 * provider (types, limits, lineage, the child's policy, its session, its result), and the `Task` tool.
 *
 * @module
 */
import type { z } from "zod";
import {
  type Context,
  type Disposer,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { PromptKey } from "../prompt/prompt_assembler.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import type { UsageRollup } from "../sessions/usage.ts";
import { messageOf } from "../tools/tool.ts";
import { ToolsKey } from "../tools/tool_registry.ts";
import { agentProvider } from "./agent_provider.ts";
import { childTools } from "./_child_tools.ts";
import {
  type ChildEnd,
  childIdFor,
  readChildEnd,
  type SubagentMeta,
  subagentMeta,
  TaskCalls,
} from "./lineage.ts";
import {
  type SubagentCall,
  type SubagentProvider,
  type SubagentResult,
  type SubagentRunOptions,
  type Subagents,
  SubagentsKey,
} from "./subagents.ts";
import { type SubagentsConfig, subagentsConfig, type SubagentType } from "./subagents_config.ts";
import { createTaskTool } from "./task_tool.ts";

const NO_USAGE: UsageRollup = Object.freeze({
  steps: 0,
  unknown_steps: 0,
  utility_calls: 0,
  input_tokens: 0,
  output_tokens: 0,
  cached_tokens: 0,
  cost: null,
});

/**
 * The subagents service: implements {@linkcode Subagents} over the `agents` registry (the `agent` provider) and any
 * provider another row registers (`acp`), and registers the `Task` tool (`parallel`, approval `never`: the child's
 * own pipeline gates every effect it has).
 *
 * @example
 * ```ts ignore
 * const result = await ctx.get(SubagentsKey).run({
 *   prompt: "Summarize README.md",
 *   description: "Summarize the readme",
 *   subagent_type: "general-purpose",
 *   session_id: "p", agent_id: "p", call_id: "c1", ctx: agent.ctx,
 * });
 * console.log(result.status, result.session_id); // "completed" "p.sub-1"
 * ```
 */
export class SubagentsService extends Service<SubagentsConfig> implements Subagents {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-subagents";
  /** One line for the config catalog. */
  static readonly description =
    "Subagents (row subagents): the Task tool, child agents in fresh durable sessions under their parent's " +
    "policy, their types and limits.";
  /** The service key. */
  static readonly key: ServiceKey<Subagents> = SubagentsKey;
  /** Children are agents on the log, offered through the tool registry. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey, ToolsKey];
  /** The config schema. */
  static readonly config: z.ZodType<SubagentsConfig> = subagentsConfig;

  /** No host permission of its own: children reach the host through their tools. */
  static permissions(_config: SubagentsConfig): HostPermissions {
    return {};
  }

  readonly #providers = new Map<string, SubagentProvider[]>();
  /** The parents' Task calls, numbered: a child's id costs the parent's calls since its previous Task call. */
  #taskCalls: TaskCalls | undefined;
  /** Children running per parent session. */
  readonly #running = new Map<string, number>();

  get types(): readonly SubagentType[] {
    return this.config.types;
  }

  override start(): void {
    this.#taskCalls = new TaskCalls(this.ctx.get(SessionsKey));
    this.registerProvider(this.ctx, "agent", agentProvider(this.ctx));
    this.ctx.get(ToolsKey).register(this.ctx, createTaskTool(this));
  }

  registerProvider(owner: Context, name: string, provider: SubagentProvider): Disposer {
    return owner.effect(() => {
      const list = this.#providers.get(name) ?? [];
      list.push(provider);
      this.#providers.set(name, list);
      return () => {
        const index = list.indexOf(provider);
        if (index >= 0) list.splice(index, 1);
      };
    }, `subagents: provider ${name}`);
  }

  async run(call: SubagentCall, options: SubagentRunOptions = {}): Promise<SubagentResult> {
    const type = this.config.types.find((candidate) => candidate.name === call.subagent_type);
    if (type === undefined) {
      const known = this.config.types.map((known) => `"${known.name}"`).join(", ");
      return refused(
        `Cannot start a subagent of type "${call.subagent_type}": no such type. Call Task again with one of the ` +
          `known types: ${known === "" ? "(none configured)" : known}.`,
      );
    }
    if (call.prompt.trim() === "") {
      return refused(
        "Cannot start a subagent with an empty prompt: say what the subagent should do. Call Task again with " +
          "a prompt.",
        type.name,
      );
    }
    const provider = this.#providers.get(type.provider)?.at(-1);
    if (provider === undefined) {
      return refused(
        `Cannot start a subagent of type "${type.name}": its provider "${type.provider}" is not mounted on ` +
          "this host.",
        type.name,
      );
    }
    // Counted before the first await, so calls of one step that run together cannot all pass the check.
    const running = this.#running.get(call.session_id) ?? 0;
    if (running >= this.config.max_concurrent) {
      return refused(
        `Cannot start a subagent: this agent already runs ${running} at once, the most allowed ` +
          `(subagents.max_concurrent). Wait for one to finish, then call Task again.`,
        type.name,
      );
    }
    this.#running.set(call.session_id, running + 1);
    try {
      return await this.#checkDepthAndRun(call, type, provider, options.signal);
    } finally {
      const left = (this.#running.get(call.session_id) ?? 1) - 1;
      if (left === 0) this.#running.delete(call.session_id);
      else this.#running.set(call.session_id, left);
    }
  }

  async #checkDepthAndRun(
    call: SubagentCall,
    type: SubagentType,
    provider: SubagentProvider,
    signal: AbortSignal | undefined,
  ): Promise<SubagentResult> {
    const sessions = this.ctx.get(SessionsKey);
    let parentMeta: SubagentMeta | undefined;
    try {
      parentMeta = await subagentMeta(sessions, call.session_id, signal);
    } catch (error) {
      return failed(
        `Cannot start a subagent: the parent's log could not be read (${messageOf(error)})`,
      );
    }
    const depth = (parentMeta?.depth ?? 0) + 1;
    if (depth > this.config.max_depth) {
      return refused(
        `Cannot start a subagent: this agent is at depth ${
          depth - 1
        } and subagents may nest at most ` +
          `${this.config.max_depth} deep (subagents.max_depth). Do the task yourself instead.`,
        type.name,
      );
    }
    return await this.#runChild(sessions, call, type, depth, provider, signal);
  }

  async #runChild(
    sessions: Sessions,
    call: SubagentCall,
    type: SubagentType,
    depth: number,
    provider: SubagentProvider,
    parentSignal: AbortSignal | undefined,
  ): Promise<SubagentResult> {
    let childId: string | undefined;
    const budget = new AbortController();
    const timer = setTimeout(() => {
      budget.abort(
        new Error(
          `the subagent ran out of its time budget (${this.config.timeout} s, subagents.timeout)`,
        ),
      );
    }, this.config.timeout * 1000);
    const signal = parentSignal === undefined
      ? budget.signal
      : AbortSignal.any([parentSignal, budget.signal]);
    try {
      const child = await childIdFor(sessions, call, parentSignal, this.#taskCalls);
      childId = child.id;
      if (child.existing) {
        const end = await readChildEnd(sessions, childId, parentSignal);
        if (end.status !== undefined) return await this.#result(sessions, childId, type, end);
      } else {
        await this.#createSession(sessions, call, type, depth, childId, parentSignal);
      }
      await provider.run({
        child_id: childId,
        type,
        prompt: call.prompt,
        parent: call,
        depth,
        resumed: child.existing,
        signal,
      });
      return await this.#result(sessions, childId, type);
    } catch (error) {
      this.ctx.logger.log("warn", `A subagent of session "${call.session_id}" failed`, {
        session_id: call.session_id,
        call_id: call.call_id,
        child_id: childId,
        error,
      });
      const usage = childId === undefined
        ? NO_USAGE
        : await sessions.usage(childId).catch(() => NO_USAGE);
      return {
        status: "failed",
        text: "",
        ...(childId === undefined ? {} : { session_id: childId }),
        subagent_type: type.name,
        usage,
        error: { code: "SubagentFailed", message: messageOf(error) },
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Creates the child's session: lineage and persona in `session/created`, then its policy. */
  async #createSession(
    sessions: Sessions,
    call: SubagentCall,
    type: SubagentType,
    depth: number,
    childId: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const options = signal === undefined ? {} : { signal };
    const allow = await childTools(this.ctx, call, type, signal);
    const subagent: SubagentMeta = {
      parent_session_id: call.session_id,
      parent_agent_id: call.agent_id,
      call_id: call.call_id,
      type: type.name,
      description: call.description,
      depth,
    };
    await sessions.create({
      session_id: childId,
      meta: {
        ...this.ctx.maybe(PromptKey)?.creationMeta(call.ctx),
        agent_id: childId,
        ...(type.system === "" ? {} : { persona: type.system }),
        ...(type.approvals === "inherit" ? {} : { unattended: true }),
        subagent,
      },
      ...options,
    });
    // A ceiling: a client granted the child's id may narrow it further, never widen it past the parent's share.
    await sessions.append(
      childId,
      { type: "policy/updated", payload: { allow, ceiling: true } },
      options,
    );
  }

  /** The result of a child's last turn (`end`, when it was just read): its end, its text and the child's usage. */
  async #result(
    sessions: Sessions,
    childId: string,
    type: SubagentType,
    known?: ChildEnd,
  ): Promise<SubagentResult> {
    const end = known ?? await readChildEnd(sessions, childId);
    const usage = await sessions.usage(childId);
    const base = { session_id: childId, subagent_type: type.name, usage, text: end.text };
    if (end.status === undefined) {
      return {
        ...base,
        status: "failed",
        error: { code: "SubagentUnfinished", message: "the subagent's turn did not close" },
      };
    }
    return end.error === undefined
      ? { ...base, status: end.status }
      : { ...base, status: end.status, error: end.error };
  }
}

function refused(text: string, type?: string): SubagentResult {
  return {
    status: "refused",
    text,
    ...(type === undefined ? {} : { subagent_type: type }),
    usage: NO_USAGE,
  };
}

function failed(text: string): SubagentResult {
  return { status: "failed", text, usage: NO_USAGE };
}
