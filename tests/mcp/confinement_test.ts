/**
 * Where a stdio MCP server runs: under the sandbox row when its row names no sandbox, and under its own sandbox
 * when it does (`sandbox: deno` with permissions derived from the workspace, its env and its `allow`), booted as
 * config rows with the real tool registry, the real subprocess seam and the real npm servers. A call that reaches
 * outside the grant ends in the server's error, passed to the model as an `is_error` result.
 */
import assert from "node:assert/strict";
import { type Context, createContext, createMemoryLogger, Loader, type Row } from "@terret/hames";
import {
  ApprovalsService,
  mcpPlugin,
  memoryStorePlugin,
  SessionsKey,
  sessionsPlugin,
  ToolAllowList,
  ToolRegistry,
  ToolsKey,
} from "@terret/core";
import type { ToolResultPayload as ToolResult } from "@terret/core/tools";
import {
  denoSandboxPlugin,
  noneSandboxPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";
import { EVERYTHING, prefetchServers } from "./_world.ts";

/** What server-everything reads from its environment when it loads. */
const EVERYTHING_ENV = [
  "GZIP_MAX_FETCH_SIZE",
  "GZIP_MAX_FETCH_TIME_MILLIS",
  "GZIP_ALLOWED_DOMAINS",
];

const NONE_ROW = { plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } };

interface Booted extends AsyncDisposable {
  readonly ctx: Context;
  readonly dir: string;
  /** Runs a tool through the registry as the model's call would. */
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /** The registered tool names of one server. */
  tools(server: string): string[];
}

/**
 * Boots one MCP row with the real registry, allow list and execution world over a fresh temp workspace.
 *
 * @param mcp the row's config, given the workspace directory
 * @param sandbox the sandbox row
 */
async function boot(
  mcp: (dir: string) => Record<string, unknown>,
  sandbox: { plugin: Row["plugin"]; config: unknown } = NONE_ROW,
): Promise<Booted> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-mcp-box-" }));
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const loader = new Loader(ctx);
  const dispose = async () => {
    await ctx.dispose();
    await Deno.remove(dir, { recursive: true });
  };
  const config = mcp(dir);
  try {
    await loader.load([
      { id: `mcp.${config.name}`, plugin: mcpPlugin, config },
      { id: "tools.allow", plugin: ToolAllowList, config: { allow: ["mcp__*"] } },
      { id: "approvals", plugin: ApprovalsService, config: { allow: ["mcp__*"] } },
      { id: "tools", plugin: ToolRegistry, config: {} },
      { id: "sessions", plugin: sessionsPlugin, config: {} },
      { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 500 } },
      { id: "sandbox", plugin: sandbox.plugin, config: sandbox.config },
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    ]);
    await ctx.get(SessionsKey).create({ session_id: "s1" });
  } catch (error) {
    await dispose();
    throw error;
  }
  let calls = 0;
  return {
    ctx,
    dir,
    call: (name, args = {}) =>
      ctx.get(ToolsKey).execute({ id: `c${++calls}`, name, args }, {
        ctx,
        session_id: "s1",
        agent_id: "a1",
      }),
    tools: (server) =>
      ctx.get(ToolsKey).list().map((info) => info.name).filter((name) =>
        name.startsWith(`mcp__${server}__`)
      ),
    [Symbol.asyncDispose]: dispose,
  };
}

const EVERYTHING_TOOLS = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-long-running-operation",
].map((tool) => `mcp__everything__${tool}`);

Deno.test("a stdio row without sandbox: runs under the sandbox row (a deno row denies what it does not grant)", async () => {
  await prefetchServers();
  await using b = await boot(() => ({
    name: "everything",
    transport: "stdio",
    command: EVERYTHING,
    args: ["stdio"],
    env: { NO_COLOR: "1" },
  }), { plugin: denoSandboxPlugin, config: { env: EVERYTHING_ENV } });
  assert.deepStrictEqual(b.tools("everything"), EVERYTHING_TOOLS);
  assert.deepStrictEqual(
    await b.call("mcp__everything__echo", { message: "inside" }),
    { id: "c1", name: "mcp__everything__echo", content: "Echo: inside", is_error: false },
  );
  // Unwrapped, get-env would answer with the whole environment.
  assert.deepStrictEqual(await b.call("mcp__everything__get-env"), {
    id: "c2",
    name: "mcp__everything__get-env",
    content: 'Requires env access to "toJSON", run again with the --allow-env flag',
    is_error: true,
  });
});
