/**
 * The `terret-mcp` plugin as config rows beside the real tool registry, allow list, prompt service and execution
 * world: boot order, governance by the allow list, failures that end in tool errors while the registry keeps
 * working, resources as prompt sections, teardown, permissions.
 */
import { MCP_RUNTIME_ENV } from "../../core/mcp/runtime_env.ts";
import assert from "node:assert/strict";
import {
  type Context,
  createContext,
  createMemoryLogger,
  Loader,
  pluginPermissions,
  type Row,
  TerretError,
} from "@terret/hames";
import {
  ApprovalsService,
  mcpPlugin,
  McpToolsReconciled,
  memoryStorePlugin,
  PromptAssembler,
  PromptKey,
  SessionsKey,
  sessionsPlugin,
  ToolAllowList,
  ToolRegistry,
  ToolsKey,
} from "@terret/core";
import { mcpServerConfig } from "@terret/core/mcp";
import { noneSandboxPlugin, subprocessPlugin, workspacePlugin } from "@terret/exec";
import {
  alive,
  DENO_CHILD_ENV,
  EVERYTHING,
  npmServer,
  prefetchServers,
  scriptedServer,
  startScriptedHttp,
  until,
} from "./_world.ts";

interface Booted extends AsyncDisposable {
  readonly ctx: Context;
  readonly loader: Loader;
  readonly dir: string;
}

/** Boots the MCP rows first, then everything they need (boot order comes from `inject`). */
async function boot(mcpRows: readonly Row[], allow: readonly string[]): Promise<Booted> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-mcp-rows-" }));
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const loader = new Loader(ctx);
  const dispose = async () => {
    await ctx.dispose();
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await loader.load([
      ...mcpRows,
      { id: "tools.allow", plugin: ToolAllowList, config: { allow: [...allow] } },
      // Not about approvals: a rule admits every MCP call without asking.
      { id: "approvals", plugin: ApprovalsService, config: { allow: ["mcp__*"] } },
      { id: "tools", plugin: ToolRegistry, config: {} },
      { id: "prompt", plugin: PromptAssembler, config: {} },
      { id: "sessions", plugin: sessionsPlugin, config: {} },
      { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 500 } },
      { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    ]);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { ctx, loader, dir, [Symbol.asyncDispose]: dispose };
}

const everythingRow: Row = {
  id: "mcp.everything",
  plugin: mcpPlugin,
  config: {
    name: "everything",
    transport: "stdio",
    ...npmServer(EVERYTHING, "stdio"),
    env: { ...DENO_CHILD_ENV },
    trust_annotations: true,
    resources: ["demo://resource/static/document/instructions.md"],
  },
};
const scriptedRow: Row = {
  id: "mcp.scripted",
  plugin: mcpPlugin,
  config: { name: "scripted", transport: "stdio", ...scriptedServer(), timeout_ms: 500 },
};

Deno.test("mcp rows boot after the services they need and their tools are governed by the allow list", async () => {
  await prefetchServers();
  await using b = await boot([everythingRow, scriptedRow], [
    "mcp__everything__get-sum",
    "mcp__everything__echo",
    "mcp__scripted__*",
  ]);
  const tools = b.ctx.get(ToolsKey);
  const sessions = b.ctx.get(SessionsKey);
  await sessions.create({ session_id: "s1" });
  const names = tools.list().map((info) => info.name);
  assert.equal(names.length, 19);
  assert.deepStrictEqual(names.filter((name) => name.startsWith("mcp__scripted__")), [
    "mcp__scripted__crash",
    "mcp__scripted__echo",
    "mcp__scripted__hang",
    "mcp__scripted__malformed",
    "mcp__scripted__pid",
    "mcp__scripted__set_roster",
    "mcp__scripted__weather",
  ]);
  const getSum = tools.get("mcp__everything__get-sum")!;
  assert.deepStrictEqual(
    [getSum.mutating, getSum.concurrency, getSum.approval, getSum.parameters.required],
    [false, "parallel", "policy", ["a", "b"]],
  );
  const offered = await tools.offered({ ctx: b.ctx, session_id: "s1" });
  assert.deepStrictEqual(offered.map((schema) => schema.name), [
    "mcp__everything__echo",
    "mcp__everything__get-sum",
    ...names.filter((name) => name.startsWith("mcp__scripted__")),
  ]);

  const run = { ctx: b.ctx, session_id: "s1", agent_id: "a1" };
  assert.deepStrictEqual(
    await tools.execute({ id: "c1", name: "mcp__everything__get-sum", args: { a: 1, b: 2 } }, run),
    {
      id: "c1",
      name: "mcp__everything__get-sum",
      content: "The sum of 1 and 2 is 3.",
      is_error: false,
    },
  );
  const denied = await tools.execute({ id: "c2", name: "mcp__everything__get-env", args: {} }, run);
  assert.deepStrictEqual([denied.is_error, denied.content], [
    true,
    'Cannot run tool "mcp__everything__get-env": it is not on the allow list (denied by policy). Do not call it again; use a tool you are allowed to use or continue without it.',
  ]);
  // The registry validates arguments against the server's schema before the server sees them.
  const invalid = await tools.execute(
    { id: "c3", name: "mcp__everything__get-sum", args: { a: "one", b: 2 } },
    run,
  );
  assert.deepStrictEqual(invalid, {
    id: "c3",
    name: "mcp__everything__get-sum",
    content:
      'Invalid arguments for tool "mcp__everything__get-sum": a: expected number, got string. Call the tool again with arguments matching its schema.',
    is_error: true,
  });

  // A server that never answers: its call ends in a tool error at its timeout; the registry keeps working
  // meanwhile (another server's call completes while it hangs).
  const hanging = tools.execute({ id: "c4", name: "mcp__scripted__hang", args: {} }, run);
  assert.deepStrictEqual(
    await tools.execute({ id: "c5", name: "mcp__everything__echo", args: { message: "x" } }, run),
    { id: "c5", name: "mcp__everything__echo", content: "Echo: x", is_error: false },
  );
  assert.deepStrictEqual(await hanging, {
    id: "c4",
    name: "mcp__scripted__hang",
    content:
      'MCP server "scripted" gave no answer within 500 ms; the connection was reset and the next call reconnects',
    is_error: true,
  });
  // A server answering with malformed JSON-RPC, and one that dies mid-call: tool errors, then it is back.
  assert.deepStrictEqual(
    await tools.execute({ id: "c6", name: "mcp__scripted__malformed", args: {} }, run),
    {
      id: "c6",
      name: "mcp__scripted__malformed",
      content:
        'MCP server "scripted" is unavailable: sent malformed JSON-RPC: this line is not JSON-RPC; a restart is scheduled within 1 s',
      is_error: true,
    },
  );
  const pidResult = async () =>
    (await tools.execute({ id: "c7", name: "mcp__scripted__pid", args: {} }, run)).content;
  const restarted = async () => /^\d+$/.test(String(await pidResult()));
  await until("the scripted server's restart", restarted);
  const crashed = await tools.execute({ id: "c8", name: "mcp__scripted__crash", args: {} }, run);
  assert.deepStrictEqual(crashed, {
    id: "c8",
    name: "mcp__scripted__crash",
    content:
      'MCP server "scripted" is unavailable: exited with code 3 (stderr: call pid | call crash | fatal: crashing on purpose); a restart is scheduled within 1 s',
    is_error: true,
  });

  // Stopping the row kills the server and unregisters exactly its tools.
  await until("the scripted server's restart", restarted);
  const pid = Number(await pidResult());
  await b.loader.fiber("mcp.scripted")!.dispose();
  assert.deepStrictEqual(
    tools.list().map((info) => info.name).filter((name) => !name.startsWith("mcp__everything__")),
    [],
  );
  await until("the server to exit", async () => !(await alive(pid)));
});

Deno.test("a resource named by the row renders in the assembled system prompt", async () => {
  await prefetchServers();
  await using b = await boot([everythingRow], []);
  const prompt = b.ctx.get(PromptKey);
  await b.ctx.get(SessionsKey).create({ session_id: "s1" });
  const sections = prompt.sections(b.ctx).map((section) => section.name);
  assert.equal(sections.filter((name) => name.startsWith("mcp.everything:")).length, 1);
  const system = await prompt.assemble(b.ctx, { session_id: "s1", agent_id: "a1" });
  assert.equal(
    system.includes(
      '<mcp-resource server="everything" uri="demo://resource/static/document/instructions.md" mime="text/markdown">\n',
    ),
    true,
  );
  assert.equal(system, await prompt.assemble(b.ctx, { session_id: "s1", agent_id: "a1" }));
});

Deno.test("an http row needs no subprocess, and declares the net permission of its URL", async () => {
  await using peer = await startScriptedHttp();
  await using ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const reconciled: unknown[] = [];
  ctx.on(McpToolsReconciled, (payload) => void reconciled.push(payload.added.length));
  await new Loader(ctx).load([
    { id: "tools", plugin: ToolRegistry, config: {} },
    {
      id: "mcp.remote",
      plugin: mcpPlugin,
      config: { name: "remote", transport: "http", url: peer.url, headers: { "X-Key": "k" } },
    },
  ]);
  assert.equal(ctx.get(ToolsKey).get("mcp__remote__echo")?.description, "Echoes text");
  assert.deepStrictEqual(reconciled, [7]);
  const http = mcpServerConfig.parse({ name: "r", transport: "http", url: peer.url });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, http), { net: [`127.0.0.1:${peer.port}`] });
  const https = mcpServerConfig.parse({
    name: "r",
    transport: "http",
    url: "https://mcp.example.com/mcp",
  });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, https), { net: ["mcp.example.com"] });
  // A stdio row reads the host variables it passes on (its inherit_env), nothing else.
  const stdio = mcpServerConfig.parse({ name: "s", transport: "stdio", command: "srv" });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, stdio), { env: [...MCP_RUNTIME_ENV] });
  const bare = mcpServerConfig.parse({
    name: "s",
    transport: "stdio",
    command: "srv",
    inherit_env: [],
  });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, bare), { env: [] });
});

Deno.test("a required server that cannot start fails the boot, naming the row", async () => {
  await assert.rejects(
    boot([{
      id: "mcp.broken",
      plugin: mcpPlugin,
      config: {
        name: "broken",
        transport: "stdio",
        ...scriptedServer("--silent-init"),
        connect_timeout_ms: 300,
      },
    }], []),
    (error: unknown) =>
      error instanceof TerretError && error.code === "BootFailed" &&
      error.message ===
        'Cannot boot: row "mcp.broken" failed to start: Cannot connect to MCP server "broken": no answer to initialize within 300 ms',
  );
});

Deno.test("the row config is checked: names, transports, URLs, restart bounds", () => {
  const issues = (config: unknown) => {
    const parsed = mcpServerConfig.safeParse(config);
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };
  assert.deepStrictEqual(issues({ name: "a__b", transport: "stdio", command: "x" }), [
    "name: expected runs of letters and digits joined by single `-` or `_`",
  ]);
  assert.deepStrictEqual(issues({ name: "a", transport: "http", url: "ftp://x/mcp" }), [
    "url: Invalid URL",
  ]);
  assert.deepStrictEqual(issues({ name: "a", transport: "stdio", command: "x", cwd: "rel" }), [
    "cwd: must be absolute",
  ]);
  assert.deepStrictEqual(
    issues({ name: "a", transport: "stdio", command: "x", restart: { initial_ms: 10, max_ms: 5 } }),
    ["restart.max_ms: must not be below initial_ms"],
  );
  assert.deepStrictEqual(
    mcpServerConfig.parse({ name: "a", transport: "http", url: "http://127.0.0.1:1/mcp" }),
    {
      name: "a",
      transport: "http",
      url: "http://127.0.0.1:1/mcp",
      headers: {},
      approval: "policy",
      mutating: true,
      concurrency: "serial",
      tools: {},
      trust_annotations: false,
      timeout_ms: 60_000,
      connect_timeout_ms: 30_000,
      restart: { initial_ms: 500, max_ms: 30_000 },
      required: true,
      resources: [],
      stderr_log_chars: 16_384,
    },
  );
});
