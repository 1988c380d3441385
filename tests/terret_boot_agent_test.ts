/**
 * The shipped base bundle, booted by `Terret.boot` from the headless template, runs an agent: a tool turn through
 * the composed rows (SQLite store under the Terret home, sessions, the OpenRouter row pointed at the fake server by a
 * patch, tools and the allow-list floor, prompt, agents, loop), every event durable in the home's database; and
 * the core rows declare exactly the host permissions they need.
 */
import assert from "node:assert/strict";
import { pluginPermissions } from "@terret/hames";
import {
  AgentLoop,
  AgentRegistry,
  AgentsKey,
  jsonlStorePlugin,
  LlmRegistry,
  memoryStorePlugin,
  PromptAssembler,
  SessionsKey,
  sessionsPlugin,
  sqliteStorePlugin,
  ToolAllowList,
  ToolRegistry,
  ToolsKey,
} from "@terret/core";
import {
  fakeOpenRouter,
  scriptedTool,
  sseResponse,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";
import { Terret } from "@terret/terret";
import { writeTree } from "./fixtures/composition/tree.ts";

Deno.test("the base bundle booted from the headless template runs an agent's tool turn into the home's SQLite file", async () => {
  await using server = await fakeOpenRouter();
  server.script(
    sseResponse(toolCallTurn([{ id: "call_1", name: "clock", args: {} }])),
    sseResponse(textTurn("It is noon.")),
  );
  await using tree = await writeTree({
    "dev.yml": [
      "rows:",
      "  - id: llm.main",
      `    config: { model: test/model, base_url: "${server.url}", api_key: sk-test, max_retries: 0 }`,
      "  - id: tools.allow",
      "    config: { allow: [clock] }",
      "  - id: sandbox",
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      "  - id: interfaces.ws", // not about the socket: no listener on the shared default port
      "    disabled: true",
      "",
    ].join("\n"),
  });
  const home = tree.path("home");
  {
    await using terret = await Terret.boot("headless", {
      home,
      cwd: tree.dir,
      env: { get: () => undefined },
      patches: [tree.path("dev.yml")],
    });
    terret.ctx.get(ToolsKey).register(
      terret.ctx,
      scriptedTool("clock", { reply: () => "12:00" }).definition,
    );
    const agent = await terret.ctx.get(AgentsKey).ensure("boot-1");
    agent.send("What time is it?");
    await agent.idle();
    assert.equal(agent.status, "idle");
  }
  // A fresh boot over the same home reads the whole turn back from the SQLite file.
  await using again = await Terret.boot("headless", {
    home,
    cwd: tree.dir,
    env: { get: () => undefined },
    patches: [tree.path("dev.yml")],
  });
  const agent = await again.ctx.get(AgentsKey).ensure("boot-1");
  assert.equal(agent.status, "idle");
  const events = await again.ctx.get(SessionsKey).read("boot-1");
  assert.deepStrictEqual(events.map((event) => event.type), [
    "session/created",
    "turn/start",
    "step/start",
    "user/message",
    "assistant/message",
    "tool/call",
    "tool/result",
    "step/end",
    "step/start",
    "assistant/chunk",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  assert.deepStrictEqual(events[6]!.payload, {
    id: "call_1",
    name: "clock",
    content: "12:00",
    is_error: false,
  });
  assert.equal((await Deno.stat(`${home}/sessions/terret.db`)).isFile, true);
});

Deno.test("every core plugin declares the host permissions its config needs, and no more", () => {
  assert.deepStrictEqual(
    pluginPermissions(sqliteStorePlugin, {
      path: "sessions/terret.db",
      dir: "/h",
      synchronous: "normal",
    }),
    { read: ["/h/sessions"], write: ["/h/sessions"] },
  );
  assert.deepStrictEqual(
    pluginPermissions(sqliteStorePlugin, { path: "/abs/s.db", dir: "/h", synchronous: "normal" }),
    { read: ["/abs"], write: ["/abs"] },
  );
  assert.deepStrictEqual(
    pluginPermissions(sqliteStorePlugin, { path: ":memory:", synchronous: "normal" }),
    {},
  );
  assert.deepStrictEqual(pluginPermissions(jsonlStorePlugin, { dir: "/h/jsonl", fsync: false }), {
    read: ["/h/jsonl"],
    write: ["/h/jsonl"],
  });
  for (
    const plugin of [
      memoryStorePlugin,
      sessionsPlugin,
      LlmRegistry,
      ToolRegistry,
      ToolAllowList,
      PromptAssembler,
      AgentRegistry,
      AgentLoop,
    ]
  ) {
    assert.deepStrictEqual(pluginPermissions(plugin, {}), {});
  }
});
