import assert from "node:assert/strict";
import { z } from "zod";
import { createMemoryLogger } from "@terret/hames";
import { inheritedEnv, MCP_RUNTIME_ENV } from "./runtime_env.ts";
import { mcpServerConfig } from "./config.ts";

Deno.test("inheritedEnv() passes the set runtime variables and withholds a URL that carries credentials", () => {
  const host: Record<string, string> = {
    DENO_DIR: "/cache/deno",
    SSL_CERT_FILE: "/etc/ssl/proxy-ca.pem",
    NPM_CONFIG_REGISTRY: "https://npm.mirror.example/",
    HTTPS_PROXY: "http://user:s3cret@proxy.example:3128",
    http_proxy: "http://proxy.example:3128",
    NO_PROXY: "127.0.0.1,localhost",
    OPENROUTER_API_KEY: "sk-or-never",
  };
  const logger = createMemoryLogger();
  const env = inheritedEnv("nexus", MCP_RUNTIME_ENV, (name) => host[name], logger);
  assert.deepStrictEqual(env, {
    DENO_DIR: "/cache/deno",
    SSL_CERT_FILE: "/etc/ssl/proxy-ca.pem",
    NPM_CONFIG_REGISTRY: "https://npm.mirror.example/",
    NO_PROXY: "127.0.0.1,localhost",
    http_proxy: "http://proxy.example:3128",
  });
  assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [[
    "warn",
    'Not passing "HTTPS_PROXY" to MCP server "nexus": its URL carries credentials; set it in the ' +
    "row's env to pass it",
  ]]);
  assert.equal(JSON.stringify(logger.records).includes("s3cret"), false);
  // A row's own list is taken as is; a name it does not list is never read.
  const read: string[] = [];
  assert.deepStrictEqual(
    inheritedEnv("nexus", ["DENO_DIR"], (name) => (read.push(name), host[name]), logger),
    { DENO_DIR: "/cache/deno" },
  );
  assert.deepStrictEqual(read, ["DENO_DIR"]);
});

Deno.test("a stdio row inherits the runtime variables by default, and a row may name its own", () => {
  const row = { name: "nexus", transport: "stdio", command: "deno" };
  assert.deepStrictEqual(
    (mcpServerConfig.parse(row) as { inherit_env: readonly string[] }).inherit_env,
    [...MCP_RUNTIME_ENV],
  );
  assert.deepStrictEqual(
    (mcpServerConfig.parse({ ...row, inherit_env: [] }) as { inherit_env: readonly string[] })
      .inherit_env,
    [],
  );
  assert.throws(
    () => mcpServerConfig.parse({ ...row, inherit_env: ["NOT-A-NAME"] }),
    (error) =>
      error instanceof z.ZodError &&
      JSON.stringify(error.issues.map((issue) => issue.path)) === '[["inherit_env",0]]',
  );
});
