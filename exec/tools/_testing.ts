/**
 * Test fixtures for the standard tools: a mounted execution world (temp workspace, a sandbox, fs, subprocess,
 * shell, terminals) with the tool registry, an allow-all floor over an in-memory log, and the `tools.std` row.
 * Not exported from the package.
 *
 * @module
 */
import { type Context, createContext, Loader, type PluginLike, type Row } from "@terret/hames";
import {
  ApprovalsService,
  memoryStorePlugin,
  SessionsKey,
  sessionsPlugin,
  ToolAllowList,
  ToolRegistry,
  type Tools,
  ToolsKey,
} from "@terret/core";
import type { ToolResultPayload } from "@terret/core/tools";
import { workspacePlugin } from "../workspace.ts";
import { noneSandboxPlugin } from "../sandbox/none.ts";
import { fsPlugin } from "../fs/fs_plugin.ts";
import { subprocessPlugin } from "../process/subprocess.ts";
import { shellPlugin } from "../process/shell.ts";
import { terminalsPlugin } from "../process/terminals.ts";
import { createStdToolsPlugin, type StdToolsPluginOptions } from "./std_tools_plugin.ts";

/** A mounted tool world. */
export interface ToolWorld extends AsyncDisposable {
  readonly ctx: Context;
  readonly loader: Loader;
  readonly tools: Tools;
  /** The workspace directory (a real path). */
  readonly dir: string;
  /** Runs one call as agent `agent-1` in session `s1`. */
  call(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<ToolResultPayload>;
}

/** Options of {@linkcode mountTools}. */
export interface ToolWorldOptions {
  /** The sandbox row (default `none`). */
  readonly sandbox?: { readonly plugin: PluginLike; readonly config?: unknown };
  /** The `tools.std` row's config. */
  readonly std?: Record<string, unknown>;
  /** Hooks config cannot reach. */
  readonly hooks?: StdToolsPluginOptions;
  /** The `tools` registry's output cap. */
  readonly maxOutputBytes?: number;
  /** More rows. */
  readonly rows?: readonly Row[];
}

/** Mounts the world over a fresh temp workspace; disposing tears it down and removes the directory. */
export async function mountTools(options: ToolWorldOptions = {}): Promise<ToolWorld> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-tools-" }));
  const ctx = createContext({ mode: "test" });
  const loader = new Loader(ctx);
  const sandbox = options.sandbox ??
    { plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } };
  try {
    await loader.load([
      { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
      { id: "sessions", plugin: sessionsPlugin, config: {} },
      {
        id: "tools",
        plugin: ToolRegistry,
        config: options.maxOutputBytes === undefined
          ? {}
          : { max_output_bytes: options.maxOutputBytes },
      },
      { id: "tools.allow", plugin: ToolAllowList, config: { allow: ["*"] } },
      // Not about approvals: rules that allow every call, so no call is parked.
      {
        id: "approvals",
        plugin: ApprovalsService,
        config: { allow: ["*"], always_can_be_ruled: true },
      },
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
      { id: "fs", plugin: fsPlugin, config: {} },
      { id: "sandbox", plugin: sandbox.plugin, config: sandbox.config },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 200 } },
      { id: "shell", plugin: shellPlugin, config: {} },
      { id: "terminals", plugin: terminalsPlugin, config: {} },
      { id: "tools.std", plugin: createStdToolsPlugin(options.hooks), config: options.std ?? {} },
      ...(options.rows ?? []),
    ]);
  } catch (error) {
    await ctx.dispose();
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
  await ctx.get(SessionsKey).create({ session_id: "s1" });
  let next = 0;
  return {
    ctx,
    loader,
    dir,
    tools: ctx.get(ToolsKey),
    call(name, args, callOptions = {}) {
      return ctx.get(ToolsKey).execute({ id: `call-${++next}`, name, args }, {
        ctx,
        session_id: "s1",
        agent_id: "agent-1",
        ...(callOptions.signal === undefined ? {} : { signal: callOptions.signal }),
      });
    },
    async [Symbol.asyncDispose]() {
      await ctx.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The text of a result (text parts joined). */
export function textOf(result: ToolResultPayload): string {
  return typeof result.content === "string"
    ? result.content
    : result.content.map((part) => part.type === "text" ? part.text : `<image ${part.media_type}>`)
      .join("\n");
}
