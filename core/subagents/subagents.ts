/**
 * The `subagents` seam: runs one child agent for a parent's tool call (the `Task` tool's engine), through a provider
 * chosen by the subagent type (a fresh child agent by default, or an external ACP agent).
 *
 * @module
 */
import { type Context, defineService, type Disposer, type ServiceKey } from "@terret/hames";
import type { UsageRollup } from "../sessions/usage.ts";
import type { SubagentType } from "./subagents_config.ts";

/** The parent side of a `Task` call. */
export interface SubagentCall {
  /** What the child is asked to do (its one user message); empty is refused. */
  readonly prompt: string;
  /** A short description of the task (3–5 words, for people watching). */
  readonly description: string;
  /** The subagent type's name; an unknown one is refused, naming the known ones. */
  readonly subagent_type: string;
  /** The parent's session. */
  readonly session_id: string;
  /** The parent agent's id (its children are `<agent_id>.sub-<n>`). */
  readonly agent_id: string;
  /** The parent's tool call id. */
  readonly call_id: string;
  /** The parent agent's context. */
  readonly ctx: Context;
}

/** Options for {@linkcode Subagents.run}. */
export interface SubagentRunOptions {
  /** Aborting it cancels the child (its result then says `cancelled`). */
  readonly signal?: AbortSignal;
}

/**
 * How a child run ended: a closed turn's status, or `refused` when no child was started (bad input, a limit) and
 * `failed` when the child could not be started or its provider failed.
 */
export type SubagentStatus = "completed" | "failed" | "cancelled" | "rejected" | "refused";

/** What a child run came to. */
export interface SubagentResult {
  readonly status: SubagentStatus;
  /** The child's final text (its last assistant message's text), or why it was refused. */
  readonly text: string;
  /** The child's session (and agent) id; absent when refused before one was made. */
  readonly session_id?: string;
  /** The child's subagent type (absent when the type was unknown). */
  readonly subagent_type?: string;
  /** The child session's usage rollup (zero when refused). */
  readonly usage: UsageRollup;
  /** The failure, for `failed`, `cancelled` and `rejected` runs. */
  readonly error?: { readonly code: string; readonly message: string };
}

/** What a provider is asked to run: a child whose durable session already exists. */
export interface ChildSpec {
  /** The child's agent id, which is also its session id (`<parent>.sub-<n>`). */
  readonly child_id: string;
  readonly type: SubagentType;
  readonly prompt: string;
  /** The parent side of the call. */
  readonly parent: SubagentCall;
  /** The child's depth (a top-level agent is 0). */
  readonly depth: number;
  /** True when the session held this call's child already (the parent's call is re-executed after a restart). */
  readonly resumed: boolean;
  /** Aborted when the parent's call is cancelled or the wall-clock budget runs out; the reason says which. */
  readonly signal: AbortSignal;
}

/**
 * A subagent provider: runs one child to the end of one turn, writing it to the child's session.
 *
 * Contract: `run` resolves once the child's turn is closed in its session (`turn/end`) or it could not be run;
 * it rejects only for a failure to start or drive the child (the seam reports it as a `failed` result, never as a
 * thrown error to the parent). It must cancel the child promptly when `signal` aborts, and it must never grant the
 * child more than the session's policy (`policy/updated`) and approval stance (`meta.unattended`) say: the seam
 * wrote both before `run` is called. It must leave nothing running for the child when it settles.
 */
export interface SubagentProvider {
  run(spec: ChildSpec): Promise<void>;
}

/**
 * The subagents seam (service key `subagents`, row `subagents`).
 *
 * Contract: `run` never rejects: bad input, a limit (depth, concurrent children, the cap on resident agents), a
 * child that fails or is cancelled all come back as a result (`refused`, `failed`, `cancelled`). A child runs in a
 * fresh durable session `<parent agent id>.sub-<n>` whose `session/created` meta records its lineage; it never
 * gets a tool its parent may not use (the parent's floor narrowed by the parent session's policy and the type's
 * list, written as the child's first `policy/updated`), and it is unattended unless its type says `inherit`.
 */
export interface Subagents {
  /** The configured subagent types. */
  readonly types: readonly SubagentType[];
  /** Runs one child for a parent's call. */
  run(call: SubagentCall, options?: SubagentRunOptions): Promise<SubagentResult>;
  /** Registers the provider a type names with `provider: <name>`, for as long as `owner` lives. */
  registerProvider(owner: Context, name: string, provider: SubagentProvider): Disposer;
}

/** The subagents service key. */
export const SubagentsKey: ServiceKey<Subagents> = defineService<Subagents>(
  "subagents",
  "Runs child agents for Task calls in fresh durable sessions, through the provider their type names",
);
