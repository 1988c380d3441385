/**
 * The MCP client against `@modelcontextprotocol/server-everything` over stdio, spawned through the real subprocess
 * seam and the `none` sandbox over a temp workspace: its tools registered and called, its content and errors
 * mapped, its tools/list_changed reconciled, its environment explicit, its resources rendered as prompt sections,
 * and a kill mid-call.
 */
import assert from "node:assert/strict";
import { DEFAULT_INHERIT_ENV } from "@terret/exec/process";
import { toToolOutcome } from "../../core/mcp/content.ts";
import { MCP_RUNTIME_ENV } from "../../core/mcp/runtime_env.ts";
import {
  DENO_CHILD_ENV,
  EVERYTHING,
  mountWorld,
  npmServer,
  prefetchServers,
  startSource,
  until,
} from "./_world.ts";

const TOOLS = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-long-running-operation",
].map((tool) => `mcp__everything__${tool}`);

function everything(extra: Record<string, unknown> = {}) {
  return {
    name: "everything",
    transport: "stdio",
    ...npmServer(EVERYTHING, "stdio"),
    env: { ...DENO_CHILD_ENV },
    ...extra,
  };
}

Deno.test("the everything server over stdio: tools registered, list_changed reconciled, calls and errors mapped", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  await using s = await startSource(w, everything());
  assert.deepStrictEqual(s.registry.names(), TOOLS);
  // It announces tools/list_changed right after initialisation (it registers capability-dependent tools late):
  // the client lists again and finds nothing new; the task-only tool is never registered.
  const reconciled = {
    server: "everything",
    removed: [],
    changed: [],
    clashes: [],
    skipped: ["simulate-research-query"],
    refused: [],
  };
  assert.deepStrictEqual(s.events, [
    { server: "everything", state: "state:ready" },
    { ...reconciled, added: TOOLS },
    { ...reconciled, added: [] },
  ]);

  const call = s.registry.call.bind(s.registry);
  assert.deepStrictEqual(await call("mcp__everything__get-sum", { a: 2, b: 3 }), {
    content: "The sum of 2 and 3 is 5.",
    is_error: false,
  });
  assert.deepStrictEqual(await call("mcp__everything__echo", { message: "hello" }), {
    content: "Echo: hello",
    is_error: false,
  });
  // Schema-invalid arguments come back as a tool error (isError), kept verbatim for the model.
  assert.deepStrictEqual(await call("mcp__everything__get-sum", { a: "two" }), {
    content:
      "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received string at a\nInvalid input: expected number, received undefined at b",
    is_error: true,
  });
  assert.deepStrictEqual(await call("mcp__everything__get-resource-links", { count: 2 }), {
    content: [
      "Here are 2 resource links to resources available in this server:",
      "[resource link] Blob Resource 1: demo://resource/dynamic/blob/1 (text/plain; Resource 1: plaintext resource)",
      "[resource link] Text Resource 2: demo://resource/dynamic/text/2 (text/plain; Resource 2: plaintext resource)",
    ].join("\n"),
    is_error: false,
  });
  // The blob is the base64 of "Resource 1: This is a base64 blob created at <the server's local time>": its size
  // depends on the hour and the locale, so the mapping's byte count is checked against the text it encodes.
  const blob = await call("mcp__everything__get-resource-reference", {
    resourceType: "Blob",
    resourceId: 1,
  });
  const lines = (blob.content as string).split("\n");
  const omitted =
    /^\[resource demo:\/\/resource\/dynamic\/blob\/1 \(text\/plain\): (\d+) bytes of binary data omitted\]$/
      .exec(lines[1] ?? "");
  assert.deepStrictEqual([blob.is_error, lines.length, lines[0], lines[2]], [
    false,
    3,
    "Returning resource reference for Resource 1:",
    "You can access this resource using the URI: demo://resource/dynamic/blob/1",
  ]);
  const raw = await s.source.connection.readResource("demo://resource/dynamic/blob/1") as {
    contents: { uri: string; mimeType: string; blob: string }[];
  };
  const encoded = Uint8Array.from(atob(raw.contents[0]!.blob), (c) => c.charCodeAt(0));
  const prefix = "Resource 1: This is a base64 blob created at ";
  assert.equal(new TextDecoder().decode(encoded).startsWith(prefix), true);
  // The tool's blob and this read were built at different instants: both encode the prefix and a time, and the
  // reported count is a byte count (the prefix and a short time), not the base64 length.
  const count = Number(omitted?.[1]);
  assert.equal(count > prefix.length && count <= prefix.length + 24, true, `count ${count}`);
  assert.deepStrictEqual(
    toToolOutcome({ content: [{ type: "resource", resource: raw.contents[0]! }] }, "everything"),
    {
      content:
        `[resource demo://resource/dynamic/blob/1 (text/plain): ${encoded.length} bytes of binary data omitted]`,
      is_error: false,
    },
  );
  const text = await call("mcp__everything__get-resource-reference", {
    resourceType: "Text",
    resourceId: 3,
  });
  assert.deepStrictEqual(
    (text.content as string).split("\n").map((line) =>
      line.replace(/created at .*$/, "created at T")
    ),
    [
      "Returning resource reference for Resource 3:",
      "[resource demo://resource/dynamic/text/3 (text/plain)]",
      "Resource 3: This is a plaintext resource created at T",
      "You can access this resource using the URI: demo://resource/dynamic/text/3",
    ],
  );
  const annotated = await call("mcp__everything__get-annotated-message", {
    messageType: "error",
    includeImage: true,
  });
  assert.deepStrictEqual(
    (annotated.content as { type: string; text?: string; media_type?: string; data?: string }[])
      .map((part) => part.type === "image" ? [part.media_type, part.data!.slice(0, 8)] : part.text),
    ["Error: Operation failed", ["image/png", "iVBORw0K"]],
  );
  // Structured content that conforms to the tool's output schema; the text block the server sent is what the
  // model reads.
  const weather = await call("mcp__everything__get-structured-content", { location: "New York" });
  assert.deepStrictEqual(
    [weather.is_error, Object.keys(JSON.parse(weather.content as string))],
    [false, ["temperature", "conditions", "humidity"]],
  );
});

Deno.test("a stdio server gets only the subprocess row's base environment, its runtime variables and its row's env", async () => {
  await prefetchServers();
  Deno.env.set("TERRET_MCP_TEST_SECRET", "hunter2");
  try {
    await using w = await mountWorld();
    await using s = await startSource(
      w,
      everything({ env: { ...DENO_CHILD_ENV, ROW_VAR: "yes" } }),
    );
    const env = JSON.parse((await s.registry.call("mcp__everything__get-env")).content as string);
    const inherited = [...DEFAULT_INHERIT_ENV, ...MCP_RUNTIME_ENV].filter((name) =>
      Deno.env.get(name) !== undefined
    );
    assert.deepStrictEqual(
      Object.keys(env).sort(),
      // Deno itself adds npm_config_user_agent for npm packages.
      [
        ...new Set(inherited),
        "DENO_NO_UPDATE_CHECK",
        "NO_COLOR",
        "ROW_VAR",
        "npm_config_user_agent",
      ].sort(),
    );
    // A custom Deno cache reaches the server (the suite runs under one in tests/mcp/fresh_cache_test.ts).
    assert.deepStrictEqual([env.ROW_VAR, env.DENO_DIR], ["yes", Deno.env.get("DENO_DIR")]);
  } finally {
    Deno.env.delete("TERRET_MCP_TEST_SECRET");
  }
});

Deno.test("approval, mutating and concurrency: server defaults, trusted readOnlyHint, per-tool overrides", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  await using s = await startSource(
    w,
    everything({
      approval: "never",
      trust_annotations: true,
      tools: { echo: { approval: "always", concurrency: "serial" } },
    }),
  );
  const meta = (tool: string) => {
    const spec = s.registry.tools.get(`mcp__everything__${tool}`)!;
    return [spec.approval, spec.mutating, spec.concurrency];
  };
  assert.deepStrictEqual(
    ["get-sum", "echo", "gzip-file-as-resource", "toggle-simulated-logging"].map(meta),
    [
      ["never", false, "parallel"],
      ["always", false, "serial"],
      ["never", true, "serial"],
      ["never", true, "serial"],
    ],
  );
});

Deno.test("a configured resource renders as a prompt section and is re-read when the server says it changed", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  const uri = "demo://resource/static/document/features.md";
  await using s = await startSource(w, everything({ resources: [uri] }));
  const section = s.source.resourceText(uri);
  assert.equal(
    section.split("\n").slice(0, 2).join("\n"),
    `<mcp-resource server="everything" uri="${uri}" mime="text/markdown">\n# Everything Server - Features`,
  );
  assert.equal(section.endsWith("\n</mcp-resource>"), true);
  const reads = () =>
    w.logger.records.filter((record) => record.message === `Read MCP resource "${uri}"`).length;
  assert.equal(reads(), 1);
  // The server sends notifications/resources/updated for subscribed URIs as soon as updates are toggled on.
  await s.registry.call("mcp__everything__toggle-subscriber-updates");
  await until("the re-read", () => reads() === 2);
  assert.equal(s.source.resourceText(uri), section);
  // Off again, so the server exits as soon as its stdin closes.
  await s.registry.call("mcp__everything__toggle-subscriber-updates");
});

Deno.test("the everything server killed mid-call: the call ends at once, the server restarts, the tools work", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  await using s = await startSource(w, everything({ timeout_ms: 30_000 }));
  const pid = s.source.connection.pid!;
  const call = s.registry.call("mcp__everything__trigger-long-running-operation", {
    duration: 20,
    steps: 4,
  });
  Deno.kill(pid, "SIGKILL");
  assert.deepStrictEqual(await call, {
    content:
      'MCP server "everything" is unavailable: was killed by SIGKILL (stderr: Starting default (STDIO) server...); a restart is scheduled within 1 s',
    is_error: true,
  });
  await until("the restart", () => s.source.connection.state === "ready");
  assert.notEqual(s.source.connection.pid, pid);
  assert.deepStrictEqual(await s.registry.call("mcp__everything__get-sum", { a: 20, b: 22 }), {
    content: "The sum of 20 and 22 is 42.",
    is_error: false,
  });
});
