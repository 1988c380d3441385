import assert from "node:assert/strict";
import { mcpPlugin } from "@terret/core";
import { mcpServerConfig } from "@terret/core/mcp";
import type { DoctorInput, PreparedRow } from "@terret/terret";
import { mcpCheck } from "./mcp_check.ts";

function row(id: string, plugin: unknown, parsed: unknown = {}, name = "x"): PreparedRow {
  return {
    composed: { id, plugin: name },
    plugin,
    config: parsed,
    parsed,
    envRead: [],
  } as unknown as PreparedRow;
}

function server(name: string, extra: Record<string, unknown> = {}): PreparedRow {
  const parsed = mcpServerConfig.parse({ name, transport: "stdio", command: "deno", ...extra });
  return row(`mcp.${name}`, mcpPlugin, parsed, "terret-mcp");
}

const input = (prepared: PreparedRow[]) => ({ prepared }) as unknown as DoctorInput;

Deno.test("mcpCheck says where each stdio server runs, warns when it is unconfined and errs when it cannot start", async () => {
  const rows = [
    server("plain"),
    server("boxed", { sandbox: "deno", env: { TOKEN: "t" }, allow: { net: ["api.github.com"] } }),
    server("bare", { sandbox: "deno" }),
    server("open", { sandbox: "none", acknowledge_unconfined: true }),
    server("wrapped", { sandbox: "bwrap" }),
    row(
      "mcp.remote",
      mcpPlugin,
      mcpServerConfig.parse({ name: "remote", transport: "http", url: "https://x.test/mcp" }),
      "terret-mcp",
    ),
  ];
  const findings = await mcpCheck.run(input([row("sandbox", {}, {}, "sandbox-docker"), ...rows]));
  assert.deepStrictEqual(findings.map((f) => [f.level, f.row, f.message]), [
    ["ok", "mcp.plain", 'MCP server "plain" runs under the sandbox row ("sandbox-docker")'],
    [
      "ok",
      "mcp.boxed",
      'MCP server "boxed" runs under its own deno sandbox: the workspace, net api.github.com; env TOKEN',
    ],
    ["ok", "mcp.bare", 'MCP server "bare" runs under its own deno sandbox: the workspace only'],
    [
      "warning",
      "mcp.open",
      'MCP server "open" runs UNCONFINED on the host (sandbox: none, acknowledged); sandbox: deno confines it',
    ],
    [
      "error",
      "mcp.wrapped",
      'MCP server "wrapped" cannot start: its sandbox "bwrap" is unavailable: the bwrap provider is not part of this build',
    ],
  ]);
  const onHost = await mcpCheck.run(
    input([row("sandbox", {}, {}, "sandbox-none"), server("plain")]),
  );
  assert.deepStrictEqual(onHost.map((f) => [f.level, f.message]), [[
    "warning",
    'MCP server "plain" runs UNSANDBOXED on the host (the sandbox row is "sandbox-none"); give its row ' +
    "sandbox: deno to confine it with Deno permissions derived from the workspace and its allow list",
  ]]);
  assert.deepStrictEqual(await mcpCheck.run(input([row("sandbox", {}, {}, "sandbox-none")])), []);
});
