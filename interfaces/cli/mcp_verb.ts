/**
 * `trt mcp doctor <server>`: starts one stdio MCP server of the profile exactly as its `mcp.<server>` row would
 * (under the row's own sandbox, or the sandbox row's), lists its tools, optionally makes one call, and reports
 * every permission Deno denied it, with the `allow` key that would grant it.
 *
 * @module
 */
import { createContext, createMemoryLogger, Loader } from "@terret/hames";
import { SubprocessKey, WorkspaceKey } from "@terret/core";
import {
  type McpServerConfig,
  type McpStdioTarget,
  McpToolSource,
  type McpToolSpec,
  stdioRowOpener,
} from "@terret/core/mcp";
import { loaderRows, type PreparedRow, prepareRow } from "@terret/terret";
import type { VerbContext } from "./trt.ts";
import { type DenoDenial, parseDenoDenials } from "./deno_denials.ts";

/** The actions of `trt mcp`. */
export const MCP_ACTIONS: readonly string[] = Object.freeze(["doctor"]);

/** The rows a stdio server needs besides its own, by id. */
const WORLD_ROWS = ["workspace", "sandbox", "subprocess"];

/** The `allow` key that grants each kind a row's own sandbox can grant. */
const GRANTABLE: Readonly<Record<string, string>> = {
  read: "allow.read",
  write: "allow.write",
  net: "allow.net",
  env: "allow.env",
  sys: "allow.sys",
};

/**
 * Runs `trt mcp <action> <server>`.
 *
 * Prints to stdout, one line each, prefixed `mcp.<server>:`: where the server runs (the row's own sandbox and its
 * grants, or the sandbox row's provider), whether it started and its tools, the `--call` result, and each denial
 * (`denied <kind> "<target>"` with the key that grants it).
 *
 * @returns 0 the server started, listed its tools (and answered the call) and was denied nothing; 1 it was denied
 *   a permission, failed to start, or the call ended in an error; 2 a usage or config error (no such row, an http
 *   server, a row missing from the profile)
 */
export async function mcpVerb(
  context: VerbContext,
  action: string,
  server: string | undefined,
): Promise<number> {
  const { io } = context;
  const usage = "usage: trt mcp doctor SERVER [--call TOOL [--args JSON]]";
  if (!MCP_ACTIONS.includes(action)) {
    io.stderr(`trt mcp: unknown action "${action}" (${usage})\n`);
    return 2;
  }
  if (server === undefined) {
    io.stderr(`trt mcp: a server is needed (${usage})\n`);
    return 2;
  }
  const call = context.args.strings.get("call");
  let args: Record<string, unknown> = {};
  const rawArgs = context.args.strings.get("args");
  if (rawArgs !== undefined) {
    const parsed = parseArgsJson(rawArgs);
    if (parsed === undefined || call === undefined) {
      io.stderr(
        `trt mcp: Cannot use --args ${
          call === undefined ? "without --call" : `"${rawArgs}": it is not a JSON object`
        } (${usage})\n`,
      );
      return 2;
    }
    args = parsed;
  }
  const resolved = await context.resolve();
  const id = `mcp.${server}`;
  const row = resolved.rows.find((candidate) => candidate.id === id && !candidate.disabled);
  if (row === undefined) {
    const known = resolved.rows.filter((candidate) =>
      candidate.id.startsWith("mcp.") && !candidate.disabled
    ).map((candidate) => candidate.id);
    io.stderr(
      `trt mcp: Cannot check MCP server "${server}": profile "${context.profile}" has no enabled row "${id}" (MCP rows: ${
        known.length === 0 ? "none" : known.join(", ")
      })\n`,
    );
    return 2;
  }
  const prepareOptions = { env: io.env, allowConfigCode: context.allowConfigCode };
  const prepared = await prepareRow(resolved, row, prepareOptions);
  const config = prepared.parsed as McpServerConfig;
  if (config.transport !== "stdio") {
    io.stderr(
      `trt mcp: Cannot check MCP server "${server}": it is reached over http, and doctor starts stdio servers\n`,
    );
    return 2;
  }
  const world: PreparedRow[] = [];
  for (const worldId of WORLD_ROWS) {
    const worldRow = resolved.rows.find((candidate) => candidate.id === worldId);
    if (worldRow === undefined || worldRow.disabled) {
      io.stderr(
        `trt mcp: Cannot start MCP server "${server}": profile "${context.profile}" has no enabled row "${worldId}"\n`,
      );
      return 2;
    }
    world.push(await prepareRow(resolved, worldRow, prepareOptions));
  }
  const out = (text: string) => io.stdout(`${id}: ${text}\n`);
  out(where(config, world.find((candidate) => candidate.composed.id === "sandbox")!));
  return await check(config, world, out, call, args);
}

/** Boots the execution world, starts the server, lists its tools, makes the call, and reports denials. */
async function check(
  config: McpServerConfig & McpStdioTarget,
  world: readonly PreparedRow[],
  out: (text: string) => void,
  call: string | undefined,
  args: Record<string, unknown>,
): Promise<number> {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "production", logger });
  const said: string[] = [];
  let failed = false;
  try {
    await new Loader(ctx).load(loaderRows(world));
    const tools = new Map<string, McpToolSpec>();
    const source = new McpToolSource({
      config: { ...config, required: true },
      open: await stdioRowOpener({
        subprocess: ctx.get(SubprocessKey),
        dirs: ctx.get(WorkspaceKey).dirs,
        config,
        logger,
        onDiagnostic: (line) => void said.push(line),
      }),
      registerTool: (spec) => {
        const tool = spec.name.slice(`mcp__${config.name}__`.length);
        tools.set(tool, spec);
        return () => void tools.delete(tool);
      },
      logger,
    });
    try {
      await source.start();
      const names = [...tools.keys()].sort();
      out(`started; ${names.length} tools: ${names.join(", ") || "none"}`);
      if (call !== undefined) {
        const spec = tools.get(call);
        if (spec === undefined) {
          out(`call ${call}: no such tool`);
          failed = true;
        } else {
          const result = await spec.execute(args, {});
          const text = typeof result.content === "string"
            ? result.content
            : JSON.stringify(result.content);
          said.push(text);
          out(`call ${call}: ${result.is_error ? "error" : "ok"}: ${oneLine(text)}`);
          failed ||= result.is_error;
        }
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      said.push(message);
      out(`failed to start: ${oneLine(message)}`);
      failed = true;
    } finally {
      await source.close();
    }
  } catch (error) {
    out(`failed to start: ${oneLine(error instanceof Error ? error.message : String(error))}`);
    failed = true;
  } finally {
    await ctx.dispose();
  }
  const denials = parseDenoDenials(said.join("\n"));
  for (const denial of denials) out(describeDenial(denial, config));
  if (denials.length === 0) out("denied nothing");
  return failed || denials.length > 0 ? 1 : 0;
}

/** Where the server runs, and what it is granted there. */
function where(config: McpStdioTarget, sandboxRow: PreparedRow): string {
  if (config.sandbox === undefined) {
    return `runs under the sandbox row (${sandboxRow.composed.plugin}); its grants are that row's`;
  }
  if (config.sandbox === "none") return "runs unconfined on the host (sandbox: none, acknowledged)";
  const allow = config.allow ?? { read: [], write: [], net: [], env: [], sys: [] };
  const env = [...new Set([...Object.keys(config.env), ...allow.env])];
  const list = (values: readonly string[]) => values.length === 0 ? "none" : values.join(",");
  return `runs under its own ${config.sandbox} sandbox: the workspace, read ${
    list(allow.read)
  }, write ${list(allow.write)}, net ${list(allow.net)}, env ${list(env)}, sys ${list(allow.sys)}`;
}

function describeDenial(denial: DenoDenial, config: McpStdioTarget): string {
  const key = GRANTABLE[denial.kind];
  const how = config.sandbox === undefined
    ? "the sandbox row's grant, or the row's own sandbox: deno"
    : key === undefined
    ? "not grantable to an MCP server"
    : `grant with ${key}`;
  return `denied ${denial.kind} "${denial.target}" (${how})`;
}

function parseArgsJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

function oneLine(text: string, max = 300): string {
  const line = text.trim().replace(/\s*\n\s*/g, " | ");
  return line.length <= max ? line : `${line.slice(0, max)}…`;
}
