/**
 * What a stdio `mcp.<server>` row's own sandbox grants: the confinement request derived from its config.
 *
 * @module
 */
import type { ConfinementRequest } from "../seams/sandbox.ts";
import type { McpStdioTarget } from "./config.ts";

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
