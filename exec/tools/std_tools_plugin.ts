/**
 * The `tools.std` row: registers the standard tools under Claude Code's names on the execution seams, each group
 * parking until its seam exists and restarting when it is replaced; Bash's approval follows the sandbox.
 *
 * @module
 */
import {
  ConfigUpdated,
  type Context,
  definePlugin,
  type HostPermissions,
  type Plugin,
} from "@terret/hames";
import { SandboxKey, type ToolDefinition, ToolsKey } from "@terret/core";
import { z } from "zod";
import { FsKey } from "../fs/file_system.ts";
import { ShellKey } from "../process/shell.ts";
import { TerminalsKey } from "../process/terminals.ts";
import { JobsKey } from "../process/jobs.ts";
import { bashApproval, createBashTool } from "./bash_tool.ts";
import { createEditTool } from "./edit_tool.ts";
import { createGlobTool } from "./glob_tool.ts";
import { createGrepTool, DEFAULT_GREP_OPTIONS, type GrepToolOptions } from "./grep_tool.ts";
import { createReadTool, DEFAULT_READ_OPTIONS, type ReadToolOptions } from "./read_tool.ts";
import { createTaskStopTool } from "./task_stop_tool.ts";
import { createTerminalCloseTool } from "./terminal_close_tool.ts";
import { createTerminalInputTool } from "./terminal_input_tool.ts";
import { createTerminalOpenTool } from "./terminal_open_tool.ts";
import { createTerminalReadTool } from "./terminal_read_tool.ts";
import {
  createWebFetchTool,
  DEFAULT_WEB_FETCH_OPTIONS,
  type WebFetchHooks,
  type WebFetchOptions,
} from "./web_fetch_tool.ts";
import { createWriteTool } from "./write_tool.ts";
import { createTodoWriteTool } from "./todo_write_tool.ts";

/** Config of the `tools.std` row. */
export interface StdToolsConfig {
  readonly read: ReadToolOptions;
  readonly grep: GrepToolOptions;
  readonly bash: { readonly default_timeout_ms: number; readonly max_timeout_ms: number };
  readonly web_fetch: WebFetchOptions;
}

const positive = z.number().int().positive();
const DOMAIN = /^(\*|(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])$/;

/** The `tools.std` row's config schema. */
export const stdToolsConfig: z.ZodType<StdToolsConfig> = z.object({
  read: z.object({
    default_lines: positive.default(DEFAULT_READ_OPTIONS.default_lines).describe(
      "Lines Read shows without a limit",
    ),
    max_line_chars: positive.default(DEFAULT_READ_OPTIONS.max_line_chars).describe(
      "Characters kept per line",
    ),
    max_scan_bytes: positive.default(DEFAULT_READ_OPTIONS.max_scan_bytes).describe(
      "Bytes one Read scans at most",
    ),
    max_image_bytes: positive.default(DEFAULT_READ_OPTIONS.max_image_bytes).describe(
      "Largest image Read returns",
    ),
  }).strict().default({ ...DEFAULT_READ_OPTIONS }).describe("Read's limits"),
  grep: z.object({
    ripgrep: z.enum(["auto", "never"]).default("auto").describe(
      "auto: run ripgrep (through the sandbox) when the execution world has it; never: the TypeScript search",
    ),
    rg: z.string().min(1).default("rg").describe("The ripgrep program"),
    max_lines: positive.default(DEFAULT_GREP_OPTIONS.max_lines).describe(
      "Output lines one Grep returns",
    ),
    max_file_bytes: positive.default(DEFAULT_GREP_OPTIONS.max_file_bytes).describe(
      "Larger files are skipped",
    ),
    max_files: positive.default(DEFAULT_GREP_OPTIONS.max_files).describe(
      "Files the TypeScript search examines",
    ),
    timeout_ms: positive.default(DEFAULT_GREP_OPTIONS.timeout_ms).describe(
      "Milliseconds a ripgrep run may take",
    ),
  }).strict().default({ ...DEFAULT_GREP_OPTIONS }).describe("Grep's engine and limits"),
  bash: z.object({
    default_timeout_ms: positive.default(120_000).describe(
      "Milliseconds a command runs without a timeout",
    ),
    max_timeout_ms: positive.default(600_000).describe("The largest timeout a call may ask for"),
  }).strict().default({ default_timeout_ms: 120_000, max_timeout_ms: 600_000 }).describe(
    "Bash's timeouts",
  ),
  web_fetch: z.object({
    allow_domains: z.array(z.string().regex(DOMAIN)).default([]).describe(
      "Hosts WebFetch may reach: example.com, *.example.com (subdomains), * (any public host). Empty: none",
    ),
    block_private_ranges: z.boolean().default(true).describe(
      "Also refuse private (10/8, 172.16/12, 192.168/16, fc00::/7), shared and documentation ranges; loopback, " +
        "link-local and unspecified addresses are always refused",
    ),
    timeout_ms: positive.default(DEFAULT_WEB_FETCH_OPTIONS.timeout_ms).describe(
      "Total deadline of one call",
    ),
    max_bytes: positive.default(DEFAULT_WEB_FETCH_OPTIONS.max_bytes).describe(
      "Body cap in bytes (decoded)",
    ),
    max_redirects: z.number().int().min(0).max(20).default(5).describe(
      "Redirects followed, each re-checked",
    ),
    max_chars: positive.default(DEFAULT_WEB_FETCH_OPTIONS.max_chars).describe(
      "Characters of text per call",
    ),
    user_agent: z.string().min(1).default(DEFAULT_WEB_FETCH_OPTIONS.user_agent).describe(
      "The User-Agent sent",
    ),
  }).strict().default({ ...DEFAULT_WEB_FETCH_OPTIONS, allow_domains: [] }).describe(
    "WebFetch's policy and limits",
  ),
}).strict() as z.ZodType<StdToolsConfig>;

/** Options of {@linkcode createStdToolsPlugin} that config cannot reach (tests). */
export interface StdToolsPluginOptions {
  /** WebFetch's resolver and dialler (see `WebFetchHooks`). */
  readonly webFetch?: WebFetchHooks;
}

/**
 * Creates the `tools.std` plugin. The row registers, as effects of sub-plugins that park until their seam exists
 * (and restart, re-registering, when it is replaced): `Read`, `Write`, `Edit`, `Glob`, `Grep` on `fs`; `Bash` on
 * `shell` and `sandbox` (its `run_in_background` on `jobs`, looked up per call); `TaskStop` on `jobs`;
 * `terminal_open`, `terminal_input`, `terminal_read`, `terminal_close` on `terminals`; `TodoWrite` (no seam: the
 * log is its storage); and
 * `WebFetch` (host-side, no seam). Bash's approval is derived from `sandbox.isolated` when it registers — `always`
 * outside a sandbox, `policy` inside — and re-derived on every `config/updated` (a sandbox reconfigured in place);
 * a replaced sandbox restarts the Bash group, which derives it afresh, so a stale value never survives a swap.
 *
 * **Permissions**: with a non-empty `web_fetch.allow_domains`, unscoped `net`: WebFetch connects to the address it
 * resolved and checked (never to a name Deno would resolve again), and those addresses cannot be listed in advance;
 * its allow list and floor are the boundary, as the fs seam's containment is for paths. With `grep.ripgrep: auto`,
 * running the `rg` program (through the subprocess row under `none`).
 */
export function createStdToolsPlugin(options: StdToolsPluginOptions = {}): Plugin<StdToolsConfig> {
  return definePlugin({
    name: "terret-tools-std",
    description:
      "The standard tools under Claude Code's names (Read, Write, Edit, Glob, Grep, Bash, TaskStop, TodoWrite, " +
      "WebFetch, terminal_*) " +
      "on the execution seams; Bash's approval follows the sandbox",
    inject: [ToolsKey],
    config: stdToolsConfig,
    permissions(config): HostPermissions {
      return {
        ...(config.web_fetch.allow_domains.length > 0 ? { net: true as const } : {}),
        ...(config.grep.ripgrep === "auto" ? { run: [config.grep.rg] } : {}),
      };
    },
    apply(ctx, config) {
      const register = (scope: Context, tools: readonly unknown[]): void => {
        const registry = scope.get(ToolsKey);
        for (const tool of tools) registry.register(scope, tool as ToolDefinition<unknown>);
      };
      register(ctx, [
        createWebFetchTool(config.web_fetch, options.webFetch ?? {}),
        createTodoWriteTool(),
      ]);
      ctx.plugin(definePlugin({
        name: "terret-tools-std-files",
        inject: [ToolsKey, FsKey],
        apply: (scope) =>
          register(scope, [
            createReadTool(config.read),
            createWriteTool(),
            createEditTool(),
            createGlobTool(),
            createGrepTool(config.grep),
          ]),
      }));
      ctx.plugin(definePlugin({
        name: "terret-tools-std-terminals",
        inject: [ToolsKey, TerminalsKey],
        apply: (scope) =>
          register(scope, [
            createTerminalOpenTool(),
            createTerminalInputTool(),
            createTerminalReadTool(),
            createTerminalCloseTool(),
          ]),
      }));
      ctx.plugin(definePlugin({
        name: "terret-tools-std-jobs",
        inject: [ToolsKey, JobsKey],
        apply: (scope) => register(scope, [createTaskStopTool()]),
      }));
      ctx.plugin(definePlugin({
        name: "terret-tools-std-bash",
        inject: [ToolsKey, ShellKey, SandboxKey],
        apply: (scope) => registerBash(scope, config.bash),
      }));
    },
  });
}

/** Registers Bash with the approval the current sandbox implies, and re-registers it whenever that changes. */
function registerBash(
  scope: Context,
  bash: StdToolsConfig["bash"],
): void {
  const derive = (): "always" | "policy" =>
    bashApproval(scope.get(SandboxKey).isolated) as "always" | "policy";
  let approval = derive();
  let registration = scope.get(ToolsKey).register(scope, createBashTool({ approval, ...bash }));
  scope.on(ConfigUpdated, async () => {
    const next = derive();
    if (next === approval) return;
    await registration();
    approval = next;
    registration = scope.get(ToolsKey).register(scope, createBashTool({ approval, ...bash }));
  });
}

/** The `tools.std` plugin as rows name it (`terret-tools-std`), without test hooks. */
export const stdToolsPlugin: Plugin<StdToolsConfig> = createStdToolsPlugin();
