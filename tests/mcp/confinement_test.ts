/**
 * Where a stdio MCP server runs: under the sandbox row when its row names no sandbox, and under its own sandbox
 * when it does (`sandbox: deno` with permissions derived from the workspace, its env and its `allow`), booted as
 * config rows with the real tool registry, the real subprocess seam and the real npm servers. A call that reaches
 * outside the grant ends in the server's error, passed to the model as an `is_error` result.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import {
  type Context,
  createContext,
  createMemoryLogger,
  Loader,
  pluginPermissions,
  type Row,
} from "@terret/hames";
import { TerretError } from "@terret/hames";
import { mcpServerConfig } from "@terret/core/mcp";
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
import { DENO, EVERYTHING, FILESYSTEM, prefetchServers } from "./_world.ts";
import { bwrapLane } from "../bwrap_lane.ts";

const BWRAP_SKIP = await bwrapLane();

/** What server-everything reads from its environment when it loads. */
const EVERYTHING_ENV = [
  "GZIP_MAX_FETCH_SIZE",
  "GZIP_MAX_FETCH_TIME_MILLIS",
  "GZIP_ALLOWED_DOMAINS",
];
/** What server-filesystem (its minimatch) reads from its environment when it loads. */
const FILESYSTEM_ENV = ["__MINIMATCH_TESTING_PLATFORM__"];

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

/** A loopback HTTP server counting the requests it gets. */
function countingServer(): { port: number; requests: () => number } & AsyncDisposable {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    requests++;
    return new Response("plain text to compress");
  });
  return {
    port: server.addr.port,
    requests: () => requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
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

Deno.test("server-everything under its own deno sandbox: tools listed, and calls outside the grant end in the server's error", async () => {
  await prefetchServers();
  await using web = countingServer();
  // The sandbox row runs programs unconfined: the row's own sandbox is all that confines the server.
  await using b = await boot(() => ({
    name: "everything",
    transport: "stdio",
    command: "deno",
    args: ["run", EVERYTHING, "stdio"],
    env: { NO_COLOR: "1" },
    sandbox: "deno",
    allow: { env: EVERYTHING_ENV },
  }));
  assert.deepStrictEqual(b.tools("everything"), EVERYTHING_TOOLS);
  assert.deepStrictEqual(
    await b.call("mcp__everything__get-sum", { a: 2, b: 3 }),
    {
      id: "c1",
      name: "mcp__everything__get-sum",
      content: "The sum of 2 and 3 is 5.",
      is_error: false,
    },
  );
  assert.deepStrictEqual(await b.call("mcp__everything__get-env"), {
    id: "c2",
    name: "mcp__everything__get-env",
    content: 'Requires env access to "toJSON", run again with the --allow-env flag',
    is_error: true,
  });
  const url = `http://127.0.0.1:${web.port}/notes.txt`;
  assert.deepStrictEqual(
    await b.call("mcp__everything__gzip-file-as-resource", { name: "n.gz", data: url }),
    {
      id: "c3",
      name: "mcp__everything__gzip-file-as-resource",
      content:
        `Requires net access to "127.0.0.1:${web.port}", run again with the --allow-net flag`,
      is_error: true,
    },
  );
  assert.equal(web.requests(), 0);
});

Deno.test("allow.net grants exactly the configured host to a server under its own deno sandbox", async () => {
  await prefetchServers();
  await using web = countingServer();
  await using b = await boot(() => ({
    name: "everything",
    transport: "stdio",
    command: EVERYTHING,
    args: ["stdio"],
    sandbox: "deno",
    allow: { env: EVERYTHING_ENV, net: [`127.0.0.1:${web.port}`] },
  }));
  const result = await b.call("mcp__everything__gzip-file-as-resource", {
    name: "n.gz",
    data: `http://127.0.0.1:${web.port}/notes.txt`,
  });
  assert.deepStrictEqual([result.is_error, web.requests()], [false, 1]);
});

Deno.test("server-filesystem under its own deno sandbox: the Deno grant, not the server's list, denies a write outside it", async () => {
  await prefetchServers();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-mcp-outside-" }));
  try {
    await Deno.writeTextFile(`${outside}/shared.txt`, "read-only grant\n");
    // The server is told both directories; the row grants the second for reading only.
    await using b = await boot((dir) => ({
      name: "fs",
      transport: "stdio",
      command: FILESYSTEM,
      args: [dir, outside],
      env: { NO_COLOR: "1" },
      sandbox: "deno",
      allow: { env: FILESYSTEM_ENV, read: [outside] },
    }));
    assert.equal(b.tools("fs").length, 14);
    assert.deepStrictEqual(await b.call("mcp__fs__list_allowed_directories"), {
      id: "c1",
      name: "mcp__fs__list_allowed_directories",
      content: `Allowed directories:\n${b.dir}\n${outside}`,
      is_error: false,
    });
    assert.deepStrictEqual(
      await b.call("mcp__fs__write_file", { path: `${b.dir}/in.txt`, content: "in\n" }),
      {
        id: "c2",
        name: "mcp__fs__write_file",
        content: `Successfully wrote to ${b.dir}/in.txt`,
        is_error: false,
      },
    );
    assert.deepStrictEqual(
      await b.call("mcp__fs__read_text_file", { path: `${outside}/shared.txt` }),
      { id: "c3", name: "mcp__fs__read_text_file", content: "read-only grant\n", is_error: false },
    );
    assert.deepStrictEqual(
      await b.call("mcp__fs__write_file", { path: `${outside}/planted.txt`, content: "x" }),
      {
        id: "c4",
        name: "mcp__fs__write_file",
        content:
          `Requires write access to "${outside}/planted.txt", run again with the --allow-write flag`,
        is_error: true,
      },
    );
    await assert.rejects(Deno.stat(`${outside}/planted.txt`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a row's own sandbox fails closed: none needs an acknowledgement, allow needs a sandbox, bwrap grants no hosts", async () => {
  const issues = (config: Record<string, unknown>) => {
    const parsed = mcpServerConfig.safeParse({
      name: "x",
      transport: "stdio",
      command: "x",
      ...config,
    });
    return parsed.success
      ? []
      : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };
  assert.deepStrictEqual(issues({ sandbox: "none" }), [
    "sandbox: none runs the server unconfined on the host; set acknowledge_unconfined: true to accept that",
  ]);
  assert.deepStrictEqual(issues({ sandbox: "deno", acknowledge_unconfined: true }), [
    "acknowledge_unconfined: applies to sandbox: none only",
  ]);
  assert.deepStrictEqual(issues({ allow: { net: ["api.github.com"], env: ["A"] } }), [
    "allow: grants net, env of the row's own sandbox; set sandbox: deno or bwrap (the sandbox row's grants are its own)",
  ]);
  assert.deepStrictEqual(issues({ sandbox: "deno", allow: { read: ["rel", "/a,b"] } }), [
    "allow.read.0: must be an absolute path without a comma",
    "allow.read.1: must be an absolute path without a comma",
  ]);
  assert.deepStrictEqual(issues({ sandbox: "docker" }), [
    'sandbox: Invalid option: expected one of "deno"|"bwrap"|"none"',
  ]);
  assert.deepStrictEqual(issues({ sandbox: "none", acknowledge_unconfined: true }), []);

  await assert.rejects(
    boot(() => ({
      name: "boxed",
      transport: "stdio",
      command: EVERYTHING,
      sandbox: "bwrap",
      allow: { net: ["api.github.com"] },
    })),
    (error: unknown) =>
      error instanceof TerretError && error.code === "BootFailed" &&
      error.message ===
        'Cannot boot: row "mcp.boxed" failed to start: Cannot confine "mcp.boxed" with the bwrap sandbox: it cannot grant network hosts ("allow.net"); use the deno sandbox for a per-host allow list',
  );
  // Under deno the row derives the flags: a server argv that sets its own is refused, never run.
  await assert.rejects(
    boot(() => ({
      name: "boxed",
      transport: "stdio",
      command: "deno",
      args: ["run", "-A", EVERYTHING],
      sandbox: "deno",
    })),
    (error: unknown) =>
      error instanceof TerretError && error.code === "BootFailed" &&
      error.message ===
        `Cannot boot: row "mcp.boxed" failed to start: Cannot connect to MCP server "boxed": Cannot run "deno run -A ${EVERYTHING}": the deno sandbox derives the flags itself and refuses "-A"`,
  );
});

Deno.test("a row with its own deno sandbox declares the host permissions that sandbox needs", () => {
  const own = mcpServerConfig.parse({
    name: "s",
    transport: "stdio",
    command: "npm:srv",
    inherit_env: ["DENO_DIR"],
    sandbox: "deno",
  });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, own), {
    env: [
      "DENO_DIR",
      "HOME",
      "XDG_CACHE_HOME",
      "HTTP_PROXY",
      "HTTPS_PROXY",
      "NO_PROXY",
      "NPM_CONFIG_REGISTRY",
      "DENO_CERT",
    ],
    run: [Deno.execPath()],
  });
  const none = mcpServerConfig.parse({
    name: "s",
    transport: "stdio",
    command: "srv",
    inherit_env: [],
    sandbox: "none",
    acknowledge_unconfined: true,
  });
  assert.deepStrictEqual(pluginPermissions(mcpPlugin, none), { env: [] });
});

Deno.test({
  name:
    "server-everything under its own bwrap sandbox: tools listed, and the unshared network ends a loopback fetch in the server's error",
  ignore: BWRAP_SKIP !== undefined,
  fn: async () => {
    await prefetchServers();
    await using web = countingServer();
    const info = await new Deno.Command(DENO, { args: ["info", "--json"], stdout: "piped" })
      .output();
    const { denoDir, npmCache } = JSON.parse(new TextDecoder().decode(info.stdout));
    // The npm cache may be a link out of DENO_DIR (tests/mcp/fresh_cache_test.ts makes one): grant where it leads.
    // Deno itself may live outside the system directories the sandbox binds (npx installs it under the home's npm
    // cache): grant the directory it is in as well.
    const read = [
      ...new Set([denoDir, await Deno.realPath(npmCache), dirname(await Deno.realPath(DENO))]),
    ];
    // The sandbox row runs programs unconfined: the row's own bubblewrap sandbox is all that confines the server,
    // which sees the Deno cache read-only and no network.
    await using b = await boot(() => ({
      name: "everything",
      transport: "stdio",
      command: DENO,
      args: ["run", "-A", "--no-config", "--cached-only", EVERYTHING, "stdio"],
      env: { NO_COLOR: "1", DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1" },
      sandbox: "bwrap",
      allow: { read },
    }));
    assert.deepStrictEqual(b.tools("everything"), EVERYTHING_TOOLS);
    assert.deepStrictEqual(await b.call("mcp__everything__echo", { message: "boxed" }), {
      id: "c1",
      name: "mcp__everything__echo",
      content: "Echo: boxed",
      is_error: false,
    });
    const url = `http://127.0.0.1:${web.port}/notes.txt`;
    const fetched = await b.call("mcp__everything__gzip-file-as-resource", {
      name: "n.gz",
      data: url,
    });
    assert.equal(fetched.is_error, true, JSON.stringify(fetched));
    assert.equal(web.requests(), 0);
  },
});
