// deno-lint-ignore-file no-console
/**
 * The client the MCP conformance runner drives: Terret's MCP client (connection, tool roster, content mapping)
 * over Streamable HTTP. The runner appends the scenario server's URL as the last argument and names the scenario
 * in `MCP_CONFORMANCE_SCENARIO`.
 *
 * Run by `tests/mcp/conformance_test.ts`; by hand:
 * `deno run -A npm:@modelcontextprotocol/conformance@0.1.16 client --command "deno run -A tests/mcp/conformance_client.ts" --scenario initialize`
 *
 * @module
 */
import { createStderrLogger } from "@terret/hames";
import { mcpServerConfig } from "../../core/mcp/config.ts";
import { McpToolSource } from "../../core/mcp/tool_source.ts";
import { httpOpener } from "../../core/mcp/transports.ts";
import type { McpToolSpec } from "../../core/mcp/roster.ts";

const url = Deno.args.at(-1);
const scenario = Deno.env.get("MCP_CONFORMANCE_SCENARIO") ?? "";
if (url === undefined) {
  console.error("usage: conformance_client.ts <server url>");
  Deno.exit(2);
}

/** The tool each claimed scenario expects the client to call, with its arguments. */
const CALLS: Record<string, { tool: string; args: Record<string, unknown> }> = {
  tools_call: { tool: "add_numbers", args: { a: 2, b: 3 } },
  "sse-retry": { tool: "test_reconnection", args: {} },
};

const tools = new Map<string, McpToolSpec>();
const config = mcpServerConfig.parse({
  name: "conformance",
  transport: "http",
  url,
  timeout_ms: 20_000,
  connect_timeout_ms: 20_000,
});
const source = new McpToolSource({
  config,
  open: httpOpener({ url, headers: {} }),
  registerTool: (spec) => {
    tools.set(spec.name, spec);
    return () => tools.delete(spec.name);
  },
  logger: createStderrLogger("warn"),
});
let failed = false;
try {
  await source.start();
  console.error(`[${scenario}] tools: ${[...tools.keys()].join(", ") || "(none)"}`);
  const call = CALLS[scenario];
  if (call !== undefined) {
    const spec = tools.get(`mcp__conformance__${call.tool}`);
    if (spec === undefined) throw new Error(`the server offers no "${call.tool}" tool`);
    const outcome = await spec.execute(call.args, {});
    console.error(`[${scenario}] ${call.tool}: ${JSON.stringify(outcome)}`);
    failed = outcome.is_error;
  }
} catch (error) {
  console.error(`[${scenario}] failed: ${(error as Error).message}`);
  failed = true;
} finally {
  await source.close();
}
Deno.exit(failed ? 1 : 0);
