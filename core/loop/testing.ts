/**
 * Test helpers for code built on agents and the loop (interfaces, drivers, tools): a mounted agent stack (store,
 * sessions, model registry with an adapter for `main`, tools, allow list, prompt, agents and a driver) and a
 * projection of a session's events for exact sequence assertions.
 *
 * @module
 */
import {
  type Context,
  createContext,
  type CreateContextOptions,
  type PluginLike,
} from "@terret/hames";
import { type ApprovalClock, ApprovalClockKey } from "../approvals/approval_clock.ts";
import { ApprovalsService } from "../approvals/approvals.ts";
import { AgentRegistry } from "../agents/agent_registry.ts";
import { type Agents, AgentsKey } from "../agents/agents.ts";
import { Llm, LlmRegistry } from "../llm/llm_registry.ts";
import type { LlmAdapter } from "../llm/vocabulary.ts";
import { type Prompt, PromptAssembler, PromptKey } from "../prompt/prompt_assembler.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { memoryStorePlugin } from "../sessions/memory_store.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import { sessionsPlugin } from "../sessions/sessions_plugin.ts";
import { sqliteStorePlugin } from "../sessions/sqlite_store_plugin.ts";
import { ToolAllowList } from "../tools/allow_list.ts";
import { ToolRegistry, type Tools, ToolsKey } from "../tools/tool_registry.ts";
import { AgentLoop } from "./loop.ts";

/** Options for {@linkcode createAgentStack}. */
export interface AgentStackOptions {
  /** The adapter registered for role `main` (none: requests fail with `LlmMissing`). */
  readonly adapter?: LlmAdapter;
  /** The allow-list floor (default: none mounted, every call denied). */
  readonly allow?: readonly string[];
  /** A SQLite file to store sessions in (default: the memory store). */
  readonly sqlitePath?: string;
  /** The `sessions.store` row to mount instead (e.g. the PostgreSQL store, which also provides agent leases). */
  readonly store?: { readonly plugin: PluginLike; readonly config?: unknown };
  /** The `approvals` row's config (default: no approvals row, so `policy` and `always` tools are denied). */
  readonly approvals?: Readonly<Record<string, unknown>>;
  /** The clock approval deadlines run on (default the system clock). */
  readonly approvalClock?: ApprovalClock;
  /** The agents cap (default 128). */
  readonly maxAgents?: number;
  /**
   * Recover unclaimed queued input at start (default false here: the adapter is registered after the rows mount,
   * so a recovered turn would find no model).
   */
  readonly recoverInput?: boolean;
  /** The loop's `max_steps` (default 25). */
  readonly maxSteps?: number;
  /** The driver plugin mounted as `loop` (default the default loop, {@linkcode AgentLoop}). */
  readonly driver?: PluginLike;
  /** The driver's config (default `{max_steps}` for the default loop, `{}` otherwise). */
  readonly driverConfig?: unknown;
  /** Context options (default `{mode: "test"}`). */
  readonly context?: CreateContextOptions;
  /** The `prompt` row's config (default `{}`: no instructions, no environment section). */
  readonly promptConfig?: unknown;
  /** More rows, mounted after every other (e.g. a plugin registering tools in its start, as a host's rows do). */
  readonly rows?: readonly {
    readonly id: string;
    readonly plugin: PluginLike;
    readonly config?: unknown;
  }[];
}

/** A mounted agent stack. */
export interface AgentStack extends AsyncDisposable {
  readonly ctx: Context;
  readonly sessions: Sessions;
  readonly tools: Tools;
  readonly prompt: Prompt;
  readonly agents: Agents;
  /** Disposes the context (agents first, then the store). */
  dispose(): Promise<void>;
}

/**
 * Mounts an agent stack on a fresh context and waits for it to settle.
 *
 * @example
 * ```ts
 * import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
 * await using stack = await createAgentStack({ adapter: scriptedAdapter([textReply("Hi")]) });
 * const agent = await stack.agents.ensure("a1");
 * agent.send("Hello");
 * await agent.idle();
 * console.log((await stack.sessions.read("a1")).map((event) => event.type).join(" "));
 * ```
 */
export async function createAgentStack(options: AgentStackOptions = {}): Promise<AgentStack> {
  const ctx = createContext(options.context ?? { mode: "test" });
  try {
    if (options.store !== undefined) {
      ctx.plugin(options.store.plugin, options.store.config ?? {}, { id: "sessions.store" });
    } else if (options.sqlitePath === undefined) {
      ctx.plugin(memoryStorePlugin, {}, { id: "sessions.store" });
    } else {
      ctx.plugin(sqliteStorePlugin, { path: options.sqlitePath }, { id: "sessions.store" });
    }
    ctx.plugin(sessionsPlugin, {}, { id: "sessions" });
    ctx.plugin(LlmRegistry, {}, { id: "llm" });
    ctx.plugin(ToolRegistry, {}, { id: "tools" });
    if (options.allow !== undefined) {
      ctx.plugin(ToolAllowList, { allow: [...options.allow] }, { id: "tools.allow" });
    }
    if (options.approvalClock !== undefined) ctx.provide(ApprovalClockKey, options.approvalClock);
    if (options.approvals !== undefined) {
      ctx.plugin(ApprovalsService, { ...options.approvals }, { id: "approvals" });
    }
    ctx.plugin(PromptAssembler, options.promptConfig ?? {}, { id: "prompt" });
    ctx.plugin(AgentRegistry, {
      max_agents: options.maxAgents ?? 128,
      recover_input: options.recoverInput ?? false,
    }, { id: "agents" });
    const driver = options.driver ?? AgentLoop;
    const driverConfig = options.driverConfig ??
      (driver === AgentLoop ? { max_steps: options.maxSteps ?? 25 } : {});
    ctx.plugin(driver, driverConfig, { id: "loop" });
    for (const row of options.rows ?? []) ctx.plugin(row.plugin, row.config ?? {}, { id: row.id });
    await ctx.idle();
    if (options.adapter !== undefined) {
      ctx.get(Llm).register(ctx, { role: "main", adapter: options.adapter });
    }
  } catch (error) {
    await ctx.dispose();
    throw error;
  }
  const dispose = (): Promise<void> => ctx.dispose();
  return {
    ctx,
    sessions: ctx.get(SessionsKey),
    tools: ctx.get(ToolsKey),
    prompt: ctx.get(PromptKey),
    agents: ctx.get(AgentsKey),
    dispose,
    [Symbol.asyncDispose]: dispose,
  };
}

/** An event reduced to what a golden sequence pins: `seq`, `type` and `payload` (ids and times vary). */
export interface EventShape {
  readonly seq: number;
  readonly type: string;
  readonly payload: unknown;
}

/** Reduces events to their {@linkcode EventShape}s. */
export function eventShapes(events: readonly SessionEvent[]): EventShape[] {
  return events.map((event) => ({ seq: event.seq, type: event.type, payload: event.payload }));
}
