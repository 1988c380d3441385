import assert from "node:assert/strict";
import { z } from "zod";
import { mcpServerConfig } from "../mcp/config.ts";
import { OpenRouterConfigSchema } from "../llm/openrouter/plugin.ts";
import { isSecretKeyName, secretField, secretValues } from "./secret_fields.ts";

Deno.test("secretValues() finds schema-marked values at any depth: MCP headers and env, a model key", () => {
  const http = {
    name: "gh",
    transport: "http",
    url: "https://mcp.example/",
    headers: { Authorization: "Bearer abc123456", "X-Team": "team-a" },
  };
  assert.deepStrictEqual(secretValues(mcpServerConfig, http), [
    { path: ["headers", "Authorization"], value: "Bearer abc123456" },
    { path: ["headers", "X-Team"], value: "team-a" },
  ]);
  const stdio = {
    name: "fs",
    transport: "stdio",
    command: "server",
    args: ["--root", "/srv"],
    env: { API_HOST: "h.example", DB_PASS: "pw-123456" },
  };
  assert.deepStrictEqual(secretValues(mcpServerConfig, stdio), [
    { path: ["env", "API_HOST"], value: "h.example" },
    { path: ["env", "DB_PASS"], value: "pw-123456" },
  ]);
  assert.deepStrictEqual(
    secretValues(OpenRouterConfigSchema, { model: "m/x", api_key: "LocalKey_1", api_key_env: "K" }),
    [{ path: ["api_key"], value: "LocalKey_1" }],
  );
});

Deno.test("secretValues() treats a string under a key named like a secret as secret, never an object's other keys", () => {
  const schema = z.object({
    plugin_cfg: z.unknown(),
    nested: z.object({ list: secretField(z.array(z.string())) }),
  });
  assert.deepStrictEqual(
    secretValues(schema, {
      plugin_cfg: {
        client_secret: "s3cr3t-value",
        token_env: "TERRET_TOKEN",
        tokens: [{ token: "tok-12345", agents: ["demo"] }],
        model: "x",
      },
      nested: { list: ["one-1", "two-2"] },
    }),
    [
      { path: ["plugin_cfg", "client_secret"], value: "s3cr3t-value" },
      { path: ["plugin_cfg", "tokens", 0, "token"], value: "tok-12345" },
      { path: ["nested", "list", 0], value: "one-1" },
      { path: ["nested", "list", 1], value: "two-2" },
    ],
  );
  assert.deepStrictEqual(
    [
      "api_key",
      "token",
      "client_secret",
      "password",
      "Authorization",
      "token_env",
      "api_key_env",
      "token_file",
      "max_tokens",
      "model",
    ]
      .map(isSecretKeyName),
    [true, true, true, true, true, false, false, false, false, false],
  );
});
