import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { mcpConfigs, mcpServerName } from "./client_mcp.ts";

function refusal(servers: acp.McpServer[]): { code: number; message: string; data: unknown } {
  try {
    mcpConfigs(servers, "/work/project");
  } catch (error) {
    const { code, message, data } = error as acp.RequestError;
    return { code, message, data };
  }
  assert.fail("the servers should have been refused");
}

Deno.test("mcpServerName() keeps letters and digits and joins the rest with single underscores", () => {
  assert.deepStrictEqual(
    ["files", "My Server!", "--git--hub--", "ü", "a".repeat(40)].map(mcpServerName),
    ["files", "My_Server", "git_hub", "", "a".repeat(32)],
  );
});

Deno.test("mcpConfigs() turns stdio and http servers into terret-mcp configs that start in the session's cwd", () => {
  const [stdio, http] = mcpConfigs([
    { name: "files", command: "/usr/bin/files", args: ["--x"], env: [{ name: "K", value: "v" }] },
    {
      type: "http",
      name: "remote api",
      url: "https://example.test/mcp",
      headers: [{ name: "Authorization", value: "Bearer t" }],
    },
  ], "/work/project");
  const pick = (config: unknown, keys: string[]) =>
    Object.fromEntries(keys.map((key) => [key, (config as Record<string, unknown>)[key]]));
  assert.deepStrictEqual(pick(stdio, ["transport", "name", "command", "args", "cwd", "env"]), {
    transport: "stdio",
    name: "files",
    command: "/usr/bin/files",
    args: ["--x"],
    cwd: "/work/project",
    env: { K: "v" },
  });
  assert.deepStrictEqual(pick(http, ["transport", "name", "url", "headers"]), {
    transport: "http",
    name: "remote_api",
    url: "https://example.test/mcp",
    headers: { Authorization: "Bearer t" },
  });
});

Deno.test("mcpConfigs() refuses an SSE server, a nameless one, a clash and a bad url, naming the field", () => {
  assert.deepStrictEqual(
    refusal([{ type: "sse", name: "old", url: "https://example.test/sse", headers: [] }]),
    {
      code: -32602,
      message: 'Cannot mount MCP server "old": SSE servers are not supported (use stdio or http)',
      data: { field: "mcpServers[0].type", name: "old" },
    },
  );
  assert.deepStrictEqual(refusal([{ name: "!!", command: "/bin/x", args: [], env: [] }]), {
    code: -32602,
    message: 'Cannot mount MCP server "!!": its name has no letter or digit',
    data: { field: "mcpServers[0].name", name: "!!" },
  });
  assert.deepStrictEqual(
    refusal([
      { name: "a b", command: "/bin/x", args: [], env: [] },
      { name: "a-b!", command: "/bin/y", args: [], env: [] },
    ]),
    {
      code: -32602,
      message: 'Cannot mount MCP server "a-b!": another server of this session is named "a_b"',
      data: { field: "mcpServers[1].name", name: "a-b!" },
    },
  );
  const bad = refusal([{ type: "http", name: "web", url: "ftp://example.test", headers: [] }]);
  assert.deepStrictEqual([bad.code, bad.data], [-32602, {
    field: "mcpServers[0].url",
    name: "web",
  }]);
});
