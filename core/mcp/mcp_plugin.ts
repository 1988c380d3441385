/**
 * The `terret-mcp` plugin: one `mcp.<server>` row per MCP server, its tools registered in `tools` as
 * `mcp__<server>__<tool>` and its chosen resources as prompt sections.
 *
 * @module
 */
import { type Context, definePlugin, type Plugin, type ServiceKey } from "@terret/hames";
import { PromptKey } from "../prompt/prompt_assembler.ts";
import { SubprocessKey } from "../seams/subprocess.ts";
import { WorkspaceKey } from "../seams/workspace.ts";
import type { JsonSchema } from "../tools/json_schema.ts";
import { ToolsKey } from "../tools/tool_registry.ts";
import { type McpServerConfig, mcpServerConfig } from "./config.ts";
import { stdioRowOpener } from "./confinement.ts";
import type { OpenedTransport } from "./connection.ts";
import { McpServerState, McpToolsReconciled } from "./events.ts";
import { McpToolSource } from "./tool_source.ts";
import { httpOpener } from "./transports.ts";

/**
 * Connects one MCP server and keeps its tools registered while the row lives.
 *
 * - **stdio**: `command`/`args` are spawned through the `subprocess` seam, so through `sandbox.wrap` like every
 *   program (a `deno` or `docker` sandbox row contains the server). A row may name its own sandbox instead
 *   (`sandbox: deno | bwrap | none`, resolved by name through `Subprocess.confine`): under `deno` the server gets
 *   read and write of the workspace directories, read of the names in its `env`, and exactly what `allow` adds;
 *   `none` needs `acknowledge_unconfined: true`. A provider that cannot run here fails the row at mount, never
 *   falling back to running the server unconfined. The server gets the subprocess row's base
 *   environment, the host variables named in `inherit_env` (by default what a Deno or npm server needs: the cache,
 *   CAs, the registry and proxy, never a URL with credentials; see `MCP_RUNTIME_ENV`) and the row's
 *   `env`, nothing else. Its working directory is `cwd` or the first workspace
 *   directory. Each (re)connection spawns it anew; stopping the row closes its stdin, then kills its process group.
 * - **http**: Streamable HTTP at `url` with the row's `headers` (protocol revisions 2025-06-18 and 2025-11-25);
 *   each (re)connection is a new session, ended with a DELETE when the row stops.
 *
 * The row starts once the server's tools are registered; a server that cannot be reached fails it (`required`,
 * the default) or is retried in the background with backoff. Tools follow `tools/list_changed` live, answer with
 * an `is_error` result while the server is down or after a timeout (which resets the connection), and are
 * governed by the allow list like every tool. Resources listed in `resources` become prompt sections.
 *
 * Injects `tools`; a stdio row also `subprocess` and `workspace`, a row with `resources` also `prompt`.
 *
 * **Permissions** (for `trt permissions`): an http row needs `--allow-net` for the URL's host (and port); a stdio
 * row needs `--allow-env` for the names in `inherit_env` (read once, at mount) and nothing else beyond what the
 * `subprocess` row declares; with `sandbox: deno` also `--allow-run` of the Deno running Terret and `--allow-env`
 * for the variables locating its cache (`HOME`, `DENO_DIR`, `XDG_CACHE_HOME`) and passed to its runtime.
 */
export const mcpPlugin: Plugin<McpServerConfig> = definePlugin({
  name: "terret-mcp",
  description:
    "An MCP server (stdio through the sandbox, or Streamable HTTP) as a source of mcp__<server>__<tool> tools",
  config: mcpServerConfig,
  inject: (config: McpServerConfig) => {
    const keys: ServiceKey<unknown>[] = [ToolsKey];
    if (config.transport === "stdio") keys.push(SubprocessKey, WorkspaceKey);
    if (config.resources.length > 0) keys.push(PromptKey);
    return keys;
  },
  permissions: (config) => {
    if (config.transport === "http") return { net: [new URL(config.url).host] };
    if (config.sandbox !== "deno") return { env: [...config.inherit_env] };
    // The row's own deno sandbox runs the Deno running Terret and locates its cache and runtime variables.
    return {
      env: [...new Set([...config.inherit_env, ...DENO_SANDBOX_HOST_ENV])],
      run: [Deno.execPath()],
    };
  },
  async apply(ctx, config) {
    const tools = ctx.get(ToolsKey);
    const prompt = config.resources.length > 0 ? ctx.get(PromptKey) : undefined;
    // Registrations live in a scope created before the source's own teardown is registered, so stopping the row
    // closes the source first (no reconciliation can race the unregistering) and then drops what is left.
    const owner = ctx.scope(`mcp.${config.name} registrations`);
    const source = new McpToolSource({
      config,
      open: await opener(ctx, config),
      registerTool: (spec) =>
        tools.register<Record<string, unknown>>(owner, {
          name: spec.name,
          description: spec.description,
          parameters: spec.parameters as JsonSchema,
          mutating: spec.mutating,
          concurrency: spec.concurrency,
          approval: spec.approval,
          handler: (args, run) => spec.execute(args, { signal: run.signal }),
        }),
      ...(prompt === undefined ? {} : {
        registerSection: (section) =>
          prompt.register(owner, {
            name: section.name,
            priority: section.priority,
            render: () => section.render() || undefined,
          }),
      }),
      logger: ctx.logger,
      onState: (payload) => ctx.emit(McpServerState, payload),
      onReconciled: (payload) => ctx.emit(McpToolsReconciled, payload),
    });
    ctx.effect(() => () => source.close(), `mcp.${config.name} connection`);
    await source.start();
  },
});

/** The host variables the deno sandbox reads to locate Deno's cache and to pass the runtime its proxy and CAs. */
const DENO_SANDBOX_HOST_ENV = [
  "HOME",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "NPM_CONFIG_REGISTRY",
  "DENO_CERT",
];

async function opener(
  ctx: Context,
  config: McpServerConfig,
): Promise<() => Promise<OpenedTransport>> {
  if (config.transport === "http") return httpOpener({ url: config.url, headers: config.headers });
  return await stdioRowOpener({
    subprocess: ctx.get(SubprocessKey),
    dirs: ctx.get(WorkspaceKey).dirs,
    config,
    logger: ctx.logger,
  });
}
