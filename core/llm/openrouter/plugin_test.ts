import assert from "node:assert/strict";
import { createContext, Loader, pluginPermissions, TerretError } from "@terret/hames";
import { fakeOpenRouter, sseResponse, textTurn } from "../../testing.ts";
import { Llm, LlmRegistry } from "../llm_registry.ts";
import type { StreamEvent } from "../vocabulary.ts";
import { OpenRouterAdapter } from "./adapter.ts";
import { OpenRouterConfigSchema, openRouterKey, openRouterLlm } from "./plugin.ts";

async function text(stream: AsyncIterable<StreamEvent>): Promise<string> {
  let out = "";
  for await (const event of stream) {
    if (event.type === "text_delta") out += event.text;
    if (event.type === "error") out += `[${event.error.message}]`;
  }
  return out;
}

Deno.test("OpenRouterConfigSchema applies the documented defaults", () => {
  assert.deepStrictEqual(OpenRouterConfigSchema.parse({ model: "m", api_key: "k" }), {
    role: "main",
    model: "m",
    base_url: "https://openrouter.ai/api/v1",
    api_key: "k",
    api_key_env: "OPENROUTER_API_KEY",
    timeout: 600,
    max_retries: 2,
  });
});

Deno.test("OpenRouterConfigSchema refuses bad rows without echoing the key", () => {
  const ctx = createContext({ mode: "test" });
  assert.throws(
    () =>
      ctx.plugin(openRouterLlm, {
        model: "m",
        api_key: "sk-or-secret",
        base_url: "ftp://sk-or-secret",
        temperature: 1,
      }, { id: "llm.main" }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ConfigInvalid" &&
      error.message ===
        'Cannot configure "llm.main": config.base_url: Invalid URL; config: Unrecognized key: "temperature"',
  );
  assert.throws(
    () => ctx.plugin(openRouterLlm, { model: "m", api_key: "" }, { id: "llm.main" }),
    (error: unknown) =>
      error instanceof TerretError &&
      error.message ===
        'Cannot configure "llm.main": config.api_key: Too small: expected string to have >=1 characters',
  );
});

Deno.test("config rows llm, llm.main and llm.titler register adapters by role; reconfigure swaps one", async () => {
  await using server = await fakeOpenRouter();
  await using ctx = createContext({ mode: "test" });
  const loader = new Loader(ctx);
  await loader.load([
    {
      id: "llm.main",
      plugin: openRouterLlm,
      config: {
        model: "big/model",
        api_key: "k1",
        base_url: server.url,
        params: { temperature: 0 },
      },
    },
    {
      id: "llm.titler",
      plugin: openRouterLlm,
      config: {
        role: "titler",
        model: "small/model",
        api_key: "k2",
        base_url: server.url,
        headers: { "X-Title": "Terret" },
        capabilities: { vision: true, max_context_tokens: 32_000 },
      },
    },
    { id: "llm", plugin: LlmRegistry },
  ]);
  const llm = ctx.get(Llm);
  assert.deepStrictEqual(llm.roles(), ["main", "titler"]);
  assert.deepStrictEqual(llm.capabilities("titler"), {
    tools: true,
    vision: true,
    thinking: false,
    caching: false,
    maxContextTokens: 32_000,
  });
  assert.equal(llm.adapter("titler") instanceof OpenRouterAdapter, true);
  server.script(
    sseResponse(textTurn("one")),
    sseResponse(textTurn("two")),
    sseResponse(textTurn("three")),
  );
  const request = { messages: [] };
  assert.equal(await text(llm.stream(request)), "one");
  assert.equal(await text(llm.stream(request, { role: "titler" })), "two");
  assert.deepStrictEqual(
    server.requests.map((r) => [(r.body as { model: string }).model, r.headers["x-title"]]),
    [
      ["big/model", undefined],
      ["small/model", "Terret"],
    ],
  );
  assert.equal((server.requests[0]!.body as { temperature: number }).temperature, 0);

  await loader.reconfigure("llm.main", {
    model: "other/model",
    api_key: "k3",
    base_url: server.url,
  });
  assert.deepStrictEqual(llm.roles(), ["titler", "main"]);
  assert.equal(await text(llm.stream(request)), "three");
  assert.equal((server.requests[2]!.body as { model: string }).model, "other/model");
  assert.equal(server.requests[2]!.headers["authorization"], "Bearer k3");
});

Deno.test("two rows claiming the same role fail the boot, naming the row", async () => {
  await using ctx = createContext({ mode: "test", logger: { log() {} } });
  const loader = new Loader(ctx);
  await assert.rejects(
    loader.load([
      { id: "llm", plugin: LlmRegistry },
      { id: "llm.main", plugin: openRouterLlm, config: { model: "a", api_key: "k" } },
      { id: "llm.backup", plugin: openRouterLlm, config: { model: "b", api_key: "k" } },
    ]),
    (error: unknown) =>
      error instanceof TerretError && error.code === "BootFailed" &&
      error.message ===
        'Cannot boot: row "llm.backup" failed to start: Cannot register a model adapter for role "main": another adapter already serves it',
  );
});

Deno.test("the adapter row asks for network access to its base_url host only", () => {
  const config = (base_url?: string) =>
    OpenRouterConfigSchema.parse(
      base_url === undefined
        ? { model: "m", api_key: "k" }
        : { model: "m", api_key: "k", base_url },
    );
  assert.deepStrictEqual(pluginPermissions(openRouterLlm, config()), { net: ["openrouter.ai"] });
  assert.deepStrictEqual(pluginPermissions(openRouterLlm, config("http://127.0.0.1:8080/v1")), {
    net: ["127.0.0.1:8080"],
  });
});

Deno.test("a row without a key mounts and fails every request at once with a provider error naming the variable", async () => {
  await using ctx = createContext({ mode: "test" });
  await new Loader(ctx).load([
    { id: "llm", plugin: LlmRegistry },
    {
      id: "llm.main",
      plugin: openRouterLlm,
      config: { model: "m", api_key_env: "TERRET_TEST_UNSET_KEY_VARIABLE" },
    },
  ]);
  const events: StreamEvent[] = [];
  for await (const event of ctx.get(Llm).stream({ messages: [] })) events.push(event);
  assert.deepStrictEqual(events, [{
    type: "error",
    error: {
      kind: "provider",
      message: 'Cannot send a model request for role "main": no API key is configured (set ' +
        "TERRET_TEST_UNSET_KEY_VARIABLE in the environment of the host, or give the row an api_key)",
      retryable: false,
    },
  }]);
  assert.equal(ctx.get(Llm).capabilities().tools, true);
});

Deno.test("openRouterKey() prefers api_key, then the api_key_env variable; empty counts as unset", () => {
  const config = OpenRouterConfigSchema.parse({ model: "m", api_key_env: "MY_KEY" });
  const env = (value: string | undefined) => ({
    get: (name: string) => name === "MY_KEY" ? value : undefined,
  });
  assert.equal(openRouterKey(config, env("sk-env")), "sk-env");
  assert.equal(openRouterKey(config, env("")), undefined);
  assert.equal(openRouterKey(config, env(undefined)), undefined);
  assert.equal(openRouterKey({ ...config, api_key: "sk-row" }, env("sk-env")), "sk-row");
  assert.deepStrictEqual(pluginPermissions(openRouterLlm, config), {
    net: ["openrouter.ai"],
    env: ["MY_KEY"],
  });
  assert.deepStrictEqual(pluginPermissions(openRouterLlm, { ...config, api_key: "k" }), {
    net: ["openrouter.ai"],
  });
});
