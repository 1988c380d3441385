/**
 * Test fixtures for the MCP client: a real execution world (workspace over a temp dir, the `none` sandbox, the
 * subprocess seam), the real MCP servers the tests start (pinned npm versions, fetched once into Deno's npm cache),
 * a scripted registry that records registrations, and condition waits.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { createContext, createMemoryLogger, Loader, type MemoryLogger } from "@terret/hames";
import type { Context, PluginLike } from "@terret/hames";
import { type Subprocess, SubprocessKey } from "@terret/core";
import { noneSandboxPlugin, subprocessPlugin, workspacePlugin } from "@terret/exec";
import type { McpToolSpec } from "../../core/mcp/roster.ts";
import type { ToolOutcome } from "@terret/core";
import { mcpServerConfig } from "../../core/mcp/config.ts";
import { McpToolSource } from "../../core/mcp/tool_source.ts";
import { httpOpener, stdioOpener } from "../../core/mcp/transports.ts";
import { inheritedEnv, readHostEnv } from "../../core/mcp/runtime_env.ts";
import { stablePort } from "../ports.ts";

/** Pinned versions of the servers the tests start. */
export const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
export const CONFORMANCE = "npm:@modelcontextprotocol/conformance@0.1.16";

/** The scripted fixture server. */
export const SCRIPTED = fileURLToPath(
  new URL("../fixtures/mcp/scripted_server.ts", import.meta.url),
);

/** The Deno binary running the tests (children run on the same one). */
export const DENO = Deno.execPath();

/** Variables every Deno child gets: no update check, no colour in stderr. */
export const DENO_CHILD_ENV: Readonly<Record<string, string>> = Object.freeze({
  DENO_NO_UPDATE_CHECK: "1",
  NO_COLOR: "1",
});

/** A mounted execution world over a temp workspace. */
export interface World extends AsyncDisposable {
  readonly ctx: Context;
  readonly loader: Loader;
  readonly logger: MemoryLogger;
  readonly dir: string;
  readonly subprocess: Subprocess;
}

/**
 * Mounts `workspace` (a fresh temp dir), a sandbox (default `none`) and the subprocess seam.
 *
 * @param sandbox the sandbox row's plugin and config
 */
export async function mountWorld(
  sandbox: { plugin: PluginLike; config: unknown } = {
    plugin: noneSandboxPlugin,
    config: { acknowledge_unsandboxed: true },
  },
): Promise<World> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-mcp-" }));
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "test", logger });
  const loader = new Loader(ctx);
  await loader.load([
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    { id: "sandbox", plugin: sandbox.plugin, config: sandbox.config },
    { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 500 } },
  ]);
  return {
    ctx,
    loader,
    logger,
    dir,
    subprocess: ctx.get(SubprocessKey),
    async [Symbol.asyncDispose]() {
      await ctx.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

let prefetched: Promise<void> | undefined;

/**
 * Puts the pinned server packages into Deno's npm cache (a no-op when they are there): the only network the MCP
 * tests use, and before any timeout starts counting.
 */
export function prefetchServers(): Promise<void> {
  prefetched ??= (async () => {
    const output = await new Deno.Command(DENO, {
      args: ["cache", "--no-config", EVERYTHING, FILESYSTEM],
      env: { ...DENO_CHILD_ENV },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `Cannot fetch the MCP test servers: ${new TextDecoder().decode(output.stderr)}`,
      );
    }
  })();
  return prefetched;
}

/** The argv that runs an npm MCP server on this Deno (`--no-config`: a stray deno.json must not apply). */
export function npmServer(spec: string, ...args: string[]): { command: string; args: string[] } {
  return { command: DENO, args: ["run", "--no-config", "-A", spec, ...args] };
}

/** The argv that runs the scripted fixture server. */
export function scriptedServer(...args: string[]): { command: string; args: string[] } {
  return {
    command: DENO,
    args: ["run", "--no-config", "--allow-net=127.0.0.1", SCRIPTED, ...args],
  };
}

/** A scripted tool registry: records registrations by name, in order, and unregisters them. */
export class RecordingRegistry {
  readonly tools = new Map<string, McpToolSpec>();
  readonly log: string[] = [];

  /** The `registerTool` function handed to the MCP client. */
  register = (spec: McpToolSpec): () => void => {
    if (this.tools.has(spec.name)) throw new Error(`duplicate ${spec.name}`);
    this.tools.set(spec.name, spec);
    this.log.push(`+${spec.name}`);
    return () => {
      if (this.tools.get(spec.name) !== spec) return;
      this.tools.delete(spec.name);
      this.log.push(`-${spec.name}`);
    };
  };

  /** The registered names, sorted. */
  names(): string[] {
    return [...this.tools.keys()].sort();
  }

  /** Runs a registered tool. */
  call(
    name: string,
    args: Record<string, unknown> = {},
    signal?: AbortSignal,
  ): Promise<ToolOutcome> {
    const spec = this.tools.get(name);
    if (spec === undefined) throw new Error(`no tool ${name}`);
    return spec.execute(args, signal === undefined ? {} : { signal });
  }
}

export { until } from "../../exec/process/_testing.ts";

/** Whether a process is alive (not a zombie), from `ps`. */
export async function alive(pid: number): Promise<boolean> {
  const output = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const stat = new TextDecoder().decode(output.stdout).trim();
  return stat !== "" && !stat.startsWith("Z");
}

/** A started tool source with what it registered and reported. */
export interface Started extends AsyncDisposable {
  readonly source: McpToolSource;
  readonly registry: RecordingRegistry;
  /** Every `mcp/server_state` and `mcp/tools_reconciled` payload, in order (states as `state:<state>`). */
  readonly events: unknown[];
}

/**
 * Builds a tool source over `world` from a row config (stdio targets spawn through the world's subprocess seam;
 * a relative `cwd` defaults to the workspace) with jitter pinned to zero, and starts it unless `start` is false.
 */
export async function startSource(
  world: World,
  row: Record<string, unknown>,
  options: { start?: boolean } = {},
): Promise<Started> {
  const config = mcpServerConfig.parse({ restart: { initial_ms: 100, max_ms: 400 }, ...row });
  const registry = new RecordingRegistry();
  const events: unknown[] = [];
  const open = config.transport === "stdio"
    ? stdioOpener(world.subprocess, {
      server: config.name,
      argv: [config.command, ...config.args],
      cwd: config.cwd ?? world.dir,
      // What the plugin passes: the inherited runtime variables, then the row's env.
      env: {
        ...inheritedEnv(config.name, config.inherit_env, readHostEnv, world.logger),
        ...config.env,
      },
      stderrLimit: config.stderr_log_chars,
    }, world.logger)
    : httpOpener({ url: config.url, headers: config.headers });
  const source = new McpToolSource({
    config,
    open,
    registerTool: registry.register,
    registerSection: () => () => {},
    logger: world.logger,
    onState: (payload) => events.push({ ...payload, state: `state:${payload.state}` }),
    onReconciled: (payload) => events.push(payload),
    random: () => 0,
  });
  if (options.start !== false) {
    try {
      await source.start();
    } catch (error) {
      await source.close();
      throw error;
    }
  }
  return { source, registry, events, [Symbol.asyncDispose]: () => source.close() };
}

/** An HTTP MCP server process the test started (a peer, not spawned through the seam). */
export interface HttpPeer extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Kills the process (SIGKILL) and waits for it. */
  kill(): Promise<void>;
  /** Everything the server wrote to stdout and stderr so far (stdout first). */
  output(): string;
}

/** The everything server in Streamable HTTP mode, loopback only (see `everything_http.ts`). */
export const EVERYTHING_HTTP = fileURLToPath(
  new URL("../fixtures/mcp/everything_http.ts", import.meta.url),
);

/**
 * Starts an HTTP MCP server on `port` and waits until its stderr matches `ready` (deadline 30 s).
 *
 * @param argv the Deno arguments after `deno`
 */
export async function startHttpPeer(
  argv: readonly string[],
  port: number,
  ready: RegExp,
): Promise<HttpPeer> {
  const child = new Deno.Command(DENO, {
    args: [...argv],
    env: { ...DENO_CHILD_ENV, PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const stdout = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) out += chunk;
  })();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    while (!ready.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`The HTTP MCP server exited before it was ready: ${seen}`);
      seen += value;
    }
  } finally {
    clearTimeout(deadline);
  }
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      seen += value;
    }
  })();
  let killed: Promise<void> | undefined;
  const kill = () => {
    killed ??= (async () => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
      await drained.catch(() => {});
      await stdout.catch(() => {});
    })();
    return killed;
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    pid: child.pid,
    kill,
    output: () => out + seen,
    [Symbol.asyncDispose]: kill,
  };
}

/**
 * Starts the everything server over Streamable HTTP on a free loopback port (a stable one: the child binds it a
 * moment later, so it must not be one a parallel test's socket can be handed meanwhile).
 */
export function startEverythingHttp(port = stablePort()): Promise<HttpPeer> {
  return startHttpPeer(
    [
      "run",
      "--no-config",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-read",
      "--allow-sys",
      EVERYTHING_HTTP,
    ],
    port,
    /listening on port/,
  );
}

/** Starts the scripted server over Streamable HTTP on a free loopback port (a stable one, as above). */
export function startScriptedHttp(port = stablePort(), ...args: string[]): Promise<HttpPeer> {
  return startHttpPeer(
    ["run", "--no-config", "--allow-net=127.0.0.1", SCRIPTED, "--http", String(port), ...args],
    port,
    /ready \(http/,
  );
}
