/**
 * Test helpers for code built on the tool registry (the loop, tool packages): a mounted tool stack over an
 * in-memory log, and scripted tools that journal when they start and finish and can be held until released, so a
 * test asserts exact orders and overlaps without sleeping.
 *
 * @module
 */
import { type Context, createContext, type CreateContextOptions } from "@terret/hames";
import { z } from "zod";
import { memoryStorePlugin } from "../sessions/memory_store.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import { sessionsPlugin } from "../sessions/sessions_plugin.ts";
import { type Prompt, PromptAssembler, PromptKey } from "../prompt/prompt_assembler.ts";
import { ApprovalsService } from "../approvals/approvals.ts";
import { ToolAllowList, type ToolPolicy, ToolPolicyKey } from "./allow_list.ts";
import type {
  ToolApproval,
  ToolConcurrency,
  ToolDefinition,
  ToolKind,
  ToolOutput,
  ToolRun,
} from "./tool.ts";
import { ToolRegistry, type Tools, ToolsKey } from "./tool_registry.ts";

const ALLOW_EVERYTHING = Object.freeze({ allow: ["*"], always_can_be_ruled: true });

/** Options for {@linkcode createToolStack}. */
export interface ToolStackOptions {
  /** The floor (`tools.allow`'s `allow`); `undefined` mounts no allow list (everything is denied). */
  readonly allow?: readonly string[];
  /** The output cap (default: the registry's default). */
  readonly maxOutputBytes?: number;
  /**
   * The `approvals` row's config. Default: rules that allow every call (`allow: ["*"]`,
   * `always_can_be_ruled: true`), so tests of other behaviour are never parked; `null` mounts no approvals row
   * (every `policy` and `always` tool is then denied, as on a host with the row disabled).
   */
  readonly approvals?: Readonly<Record<string, unknown>> | null;
  /** Context options (default `{mode: "test"}`). */
  readonly context?: CreateContextOptions;
}

/** A mounted tool stack: memory store, sessions, registry, allow list (when asked) and prompt. */
export interface ToolStack extends AsyncDisposable {
  readonly ctx: Context;
  readonly sessions: Sessions;
  readonly tools: Tools;
  /** The allow list, when mounted. */
  readonly policy: ToolPolicy | undefined;
  readonly prompt: Prompt;
  /** Disposes the context. */
  dispose(): Promise<void>;
}

/**
 * Mounts the tool stack on a fresh context and waits for it to settle.
 *
 * @example
 * ```ts
 * import { createToolStack } from "./testing.ts";
 * await using stack = await createToolStack({ allow: ["echo"] });
 * await stack.sessions.create({ session_id: "s1" });
 * console.log(stack.tools.schemas().length); // 0
 * ```
 */
export async function createToolStack(options: ToolStackOptions = {}): Promise<ToolStack> {
  const ctx = createContext(options.context ?? { mode: "test" });
  ctx.plugin(memoryStorePlugin, {}, { id: "sessions.store" });
  ctx.plugin(sessionsPlugin, {}, { id: "sessions" });
  ctx.plugin(
    ToolRegistry,
    options.maxOutputBytes === undefined ? {} : { max_output_bytes: options.maxOutputBytes },
    { id: "tools" },
  );
  if (options.allow !== undefined) {
    ctx.plugin(ToolAllowList, { allow: [...options.allow] }, { id: "tools.allow" });
  }
  const approvals = options.approvals === undefined ? ALLOW_EVERYTHING : options.approvals;
  if (approvals !== null) ctx.plugin(ApprovalsService, { ...approvals }, { id: "approvals" });
  ctx.plugin(PromptAssembler, {}, { id: "prompt" });
  await ctx.idle();
  const dispose = (): Promise<void> => ctx.dispose();
  return {
    ctx,
    sessions: ctx.get(SessionsKey),
    tools: ctx.get(ToolsKey),
    policy: ctx.maybe(ToolPolicyKey),
    prompt: ctx.get(PromptKey),
    dispose,
    [Symbol.asyncDispose]: dispose,
  };
}

/** One entry of a {@linkcode ScriptedTool}'s journal: `start` or `end` of a call. */
export interface JournalEntry {
  readonly event: "start" | "end";
  readonly tool: string;
  readonly call_id: string;
}

/** Options for {@linkcode scriptedTool}. */
export interface ScriptedToolOptions {
  /** Default `parallel`. */
  readonly concurrency?: ToolConcurrency;
  /** Default `false`. */
  readonly mutating?: boolean;
  /** Default `never` (the approvals gate is not consulted). */
  readonly approval?: ToolApproval;
  /** What the tool does, for interfaces (default `other`). */
  readonly kind?: ToolKind;
  /** Hold every call until {@linkcode ScriptedTool.release} (default false: calls finish at once). */
  readonly held?: boolean;
  /** A shared journal (to record several tools in one order); default a fresh one. */
  readonly journal?: JournalEntry[];
  /** What a call returns (default `"<name> ok: <args as JSON>"`). */
  readonly reply?: (args: Record<string, unknown>, run: ToolRun) => string | ToolOutput;
}

/** A tool that journals its calls and can hold them until released. */
export interface ScriptedTool {
  readonly definition: ToolDefinition<Record<string, unknown>>;
  /** `start`/`end` entries in the order they happened. */
  readonly journal: JournalEntry[];
  /** Every call's arguments and run, in start order. */
  readonly calls: { readonly args: Record<string, unknown>; readonly run: ToolRun }[];
  /** Resolves once `count` calls have started (fails after `timeoutMs`, default 5000). */
  started(count: number, timeoutMs?: number): Promise<void>;
  /** Releases a held call by id (or every held call). */
  release(callId?: string): void;
}

/**
 * A scripted tool with a permissive object schema: it journals `start` and `end`, optionally holds each call
 * until released, and stops with an abort error when its signal aborts.
 */
export function scriptedTool(name: string, options: ScriptedToolOptions = {}): ScriptedTool {
  const journal = options.journal ?? [];
  const calls: { args: Record<string, unknown>; run: ToolRun }[] = [];
  const holds = new Map<string, () => void>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const definition: ToolDefinition<Record<string, unknown>> = {
    name,
    description: `Scripted test tool ${name}`,
    parameters: z.looseObject({}),
    mutating: options.mutating ?? false,
    concurrency: options.concurrency ?? "parallel",
    approval: options.approval ?? "never",
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    async handler(args, run) {
      journal.push({ event: "start", tool: name, call_id: run.call_id });
      calls.push({ args, run });
      for (const waiter of waiters.filter((w) => calls.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      if (options.held === true) {
        await new Promise<void>((resolve, reject) => {
          holds.set(run.call_id, resolve);
          run.signal.addEventListener("abort", () => reject(run.signal.reason), { once: true });
        });
      }
      journal.push({ event: "end", tool: name, call_id: run.call_id });
      return options.reply?.(args, run) ?? `${name} ok: ${JSON.stringify(args)}`;
    },
  };
  return {
    definition,
    journal,
    calls,
    started(count, timeoutMs = 5000) {
      if (calls.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: ${count} calls did not start within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    release(callId) {
      for (const [id, resolve] of [...holds]) {
        if (callId === undefined || id === callId) {
          holds.delete(id);
          resolve();
        }
      }
    },
  };
}
