/**
 * Where a stdio `mcp.<server>` row's server runs: the sandbox row's, or the row's own sandbox with the confinement
 * request derived from its config; and the opener that spawns it there.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { ConfinementRequest } from "../seams/sandbox.ts";
import type { Subprocess } from "../seams/subprocess.ts";
import type { McpStdioTarget } from "./config.ts";
import type { OpenedTransport } from "./connection.ts";
import { inheritedEnv, readHostEnv } from "./runtime_env.ts";
import { stdioOpener } from "./transports.ts";

/**
 * The confinement request of a stdio row with its own `sandbox:` (undefined without one: the server runs under
 * the sandbox row). The grants are the row's `allow`, plus read access to the names of its `env` (a server may
 * always read what the row hands it). Nothing else: under `deno` that is `--allow-read`/`--allow-write` of the
 * workspace directories only, no net, no run, no ffi, no sys, unless `allow` says so.
 *
 * @param server the server name (`mcp.<server>` names the request's owner)
 * @param target the row's stdio config (defaults applied)
 * @param dirs the granted workspace directories
 */
export function mcpConfinement(
  server: string,
  target: McpStdioTarget,
  dirs: readonly string[],
): ConfinementRequest | undefined {
  if (target.sandbox === undefined) return undefined;
  const allow = target.allow ?? { read: [], write: [], net: [], env: [], sys: [] };
  return {
    provider: target.sandbox,
    owner: `mcp.${server}`,
    dirs: [...dirs],
    grants: {
      read: [...allow.read],
      write: [...allow.write],
      net: [...allow.net],
      env: [...new Set([...Object.keys(target.env), ...allow.env])],
      sys: [...allow.sys],
    },
  };
}

/** Options of {@linkcode stdioRowOpener}. */
export interface StdioRowOpenerOptions {
  /** The subprocess seam (the row's own sandbox is built through its `confine`). */
  readonly subprocess: Subprocess;
  /** The granted workspace directories (the default cwd is the first). */
  readonly dirs: readonly string[];
  /** The row's config (defaults applied). */
  readonly config: McpStdioTarget & { readonly name: string; readonly stderr_log_chars: number };
  /** Where withheld variables and the server's stderr (at `debug`) are reported. */
  readonly logger: Logger;
  /** Called with each line the server writes to stderr (and its startup noise on stdout). */
  readonly onDiagnostic?: (line: string) => void;
}

/**
 * The opener of a stdio row's server, exactly as the `terret-mcp` row starts it: its own sandbox when it names one
 * (built now, so a provider that cannot run fails here), else the subprocess seam as is; the inherited runtime
 * variables, then the row's `env`; `cwd` or the first workspace directory.
 *
 * @throws {TerretError} `ConfigInvalid` when there is no cwd; the seam's `confine` errors
 */
export async function stdioRowOpener(
  options: StdioRowOpenerOptions,
): Promise<() => Promise<OpenedTransport>> {
  const { config, dirs, logger } = options;
  const cwd = config.cwd ?? dirs[0];
  if (cwd === undefined) {
    throw new TerretError(
      "ConfigInvalid",
      `Cannot start MCP server "${config.name}": no cwd is configured and the workspace grants no directory`,
    );
  }
  const request = mcpConfinement(config.name, config, dirs);
  const subprocess = request === undefined
    ? options.subprocess
    : await options.subprocess.confine(request);
  return stdioOpener(subprocess, {
    server: config.name,
    argv: [config.command, ...config.args],
    cwd,
    env: {
      ...inheritedEnv(config.name, config.inherit_env, readHostEnv, logger),
      ...config.env,
    },
    stderrLimit: config.stderr_log_chars,
    ...(options.onDiagnostic === undefined ? {} : { onDiagnostic: options.onDiagnostic }),
  }, logger);
}
