/**
 * The MCP confinement doctor check: where each stdio MCP server of the profile runs (its own sandbox, the sandbox
 * row's, or unconfined), so a host whose third-party servers run on the host says so at `doctor` and `serve`.
 *
 * @module
 */
import { mcpPlugin } from "@terret/core";
import type { McpServerConfig } from "@terret/core/mcp";
import { SANDBOX_PROVIDERS } from "@terret/exec/sandbox";
import type { DoctorCheck, DoctorFinding, PreparedRow } from "@terret/terret";

/**
 * The `mcp` check (`atServe`), one finding per enabled stdio `terret-mcp` row (none without one):
 *
 * - `sandbox: none`: a `warning` that the server runs unconfined on the host;
 * - a provider not available in this build (`bwrap` before it lands): an `error` (the row fails to start);
 * - the row's own sandbox: `ok`, with what it grants beyond the workspace;
 * - no `sandbox:` under a `sandbox-none` row: a `warning` naming `sandbox: deno` as the fix; under another
 *   sandbox row: `ok`.
 */
export const mcpCheck: DoctorCheck = {
  name: "mcp",
  description: "where each stdio MCP server runs: its own sandbox, the sandbox row's, or the host",
  atServe: true,
  run(input) {
    const sandboxRow = input.prepared.find((row) => row.composed.id === "sandbox");
    const findings = input.prepared.filter((row) => row.plugin === mcpPlugin).flatMap((row) => {
      const config = row.parsed as McpServerConfig;
      return config.transport === "stdio" ? [judge(row.composed.id, config, sandboxRow)] : [];
    });
    return Promise.resolve(findings);
  },
};

function judge(
  id: string,
  config: McpServerConfig & { transport: "stdio" },
  sandboxRow: PreparedRow | undefined,
): DoctorFinding {
  const finding = (level: DoctorFinding["level"], message: string): DoctorFinding => ({
    level,
    check: "mcp",
    row: id,
    message: `MCP server "${config.name}" ${message}`,
  });
  switch (config.sandbox) {
    case undefined: {
      const plugin = sandboxRow?.composed.plugin;
      if (plugin === undefined) {
        return finding("error", "cannot start: no enabled sandbox row runs programs");
      }
      if (plugin === "sandbox-none") {
        return finding(
          "warning",
          `runs UNSANDBOXED on the host (the sandbox row is "sandbox-none"); give its row sandbox: deno ` +
            "to confine it with Deno permissions derived from the workspace and its allow list",
        );
      }
      return finding("ok", `runs under the sandbox row ("${plugin}")`);
    }
    case "none":
      return finding(
        "warning",
        "runs UNCONFINED on the host (sandbox: none, acknowledged); sandbox: deno confines it",
      );
    default: {
      const entry = SANDBOX_PROVIDERS[config.sandbox];
      if (entry === undefined || "unavailable" in entry) {
        return finding(
          "error",
          `cannot start: its sandbox "${config.sandbox}" ${
            entry === undefined ? "is unknown" : `is unavailable: ${entry.unavailable}`
          }`,
        );
      }
      const allow = config.allow ?? { read: [], write: [], net: [], env: [], sys: [] };
      const granted = Object.entries(allow).filter(([, list]) => list.length > 0).map((
        [kind, list],
      ) => `${kind} ${list.join(",")}`);
      return finding(
        "ok",
        `runs under its own ${config.sandbox} sandbox: the workspace${
          granted.length === 0 ? " only" : `, ${granted.join("; ")}`
        }${
          Object.keys(config.env).length === 0 ? "" : `; env ${Object.keys(config.env).join(",")}`
        }`,
      );
    }
  }
}
