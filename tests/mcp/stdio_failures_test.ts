/**
 * The MCP client against the scripted fixture server over stdio (spawned through the real subprocess seam and the
 * `none` sandbox): pagination, live list_changed reconciliation, structured content, and the failure cases: a
 * server that never answers, one that answers with malformed JSON-RPC, one that dies mid-call, one that never
 * finishes its handshake. Each failure ends in a clear tool error within the timeout while other tools keep
 * working.
 */
import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { alive, mountWorld, scriptedServer, startSource, until } from "./_world.ts";

const FIXED = [
  "mcp__scripted__crash",
  "mcp__scripted__echo",
  "mcp__scripted__hang",
  "mcp__scripted__malformed",
  "mcp__scripted__pid",
  "mcp__scripted__set_roster",
  "mcp__scripted__weather",
];
const RECONCILED_FIXED = {
  server: "scripted",
  added: FIXED,
  removed: [],
  changed: [],
  clashes: [],
  skipped: [],
  refused: [],
};

function scripted(...args: string[]) {
  return { name: "scripted", transport: "stdio", ...scriptedServer(...args) };
}

Deno.test("a paginated tools/list is followed to the end and every tool registered", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, scripted("--page-size", "2"));
  assert.deepStrictEqual(s.registry.names(), FIXED);
  assert.deepStrictEqual(s.events, [
    { server: "scripted", state: "state:ready" },
    RECONCILED_FIXED,
  ]);
  const echo = s.registry.tools.get("mcp__scripted__echo")!;
  assert.deepStrictEqual(
    [echo.description, echo.parameters, echo.approval, echo.mutating, echo.concurrency],
    [
      "Echoes text",
      { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      "policy",
      true,
      "serial",
    ],
  );
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "hi" }), {
    content: "hi",
    is_error: false,
  });
});

Deno.test("tools/list_changed is reconciled live: added, changed and removed tools", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, scripted("--page-size", "3"));
  const roster = (tools: unknown[]) => s.registry.call("mcp__scripted__set_roster", { tools });
  const reconciled = () => s.events.filter((event) => "added" in (event as object)).length;

  assert.deepStrictEqual(await roster([{ name: "alpha" }, { name: "beta" }]), {
    content: "roster: 2 extra tools",
    is_error: false,
  });
  await until("the first list_changed", () => reconciled() === 2);
  assert.deepStrictEqual(
    s.registry.names(),
    [...FIXED, "mcp__scripted__alpha", "mcp__scripted__beta"].sort(),
  );
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__beta"), {
    content: "extra beta",
    is_error: false,
  });

  await roster([{ name: "beta", description: "Beta, renewed" }, { name: "gamma" }]);
  await until("the second list_changed", () => reconciled() === 3);
  assert.deepStrictEqual(
    s.registry.names(),
    [...FIXED, "mcp__scripted__beta", "mcp__scripted__gamma"].sort(),
  );
  assert.equal(s.registry.tools.get("mcp__scripted__beta")!.description, "Beta, renewed");
  assert.deepStrictEqual(s.events.slice(2), [
    {
      server: "scripted",
      added: ["mcp__scripted__alpha", "mcp__scripted__beta"],
      removed: [],
      changed: [],
      clashes: [],
      skipped: [],
      refused: [],
    },
    {
      server: "scripted",
      added: ["mcp__scripted__gamma"],
      removed: ["mcp__scripted__alpha"],
      changed: ["mcp__scripted__beta"],
      clashes: [],
      skipped: [],
      refused: [],
    },
  ]);
  // Registrations are effects: the registry saw each one undone exactly once.
  assert.deepStrictEqual(s.registry.log.slice(FIXED.length), [
    "+mcp__scripted__alpha",
    "+mcp__scripted__beta",
    "-mcp__scripted__alpha",
    "-mcp__scripted__beta",
    "+mcp__scripted__beta",
    "+mcp__scripted__gamma",
  ]);

  // Two tools that sanitise to one name are both left out, and said so; the rest of the roster stands.
  await roster([{ name: "a.b" }, { name: "a_b" }, { name: "delta" }]);
  await until("the third list_changed", () => reconciled() === 4);
  assert.deepStrictEqual(s.events.at(-1), {
    server: "scripted",
    added: ["mcp__scripted__delta"],
    removed: ["mcp__scripted__beta", "mcp__scripted__gamma"],
    changed: [],
    clashes: ["a.b", "a_b"],
    skipped: [],
    refused: [],
  });
  assert.deepStrictEqual(
    w.logger.records.filter((record) => record.level === "error").map((record) => record.message),
    [
      'Cannot register MCP tools "a.b" and "a_b" of server "scripted": they all sanitise to "mcp__scripted__a_b"',
    ],
  );

  await s.source.close();
  assert.deepStrictEqual(s.registry.names(), []);
});

Deno.test("a name clash at start fails the start, naming both tools", async () => {
  await using w = await mountWorld();
  await assert.rejects(
    startSource(w, scripted("--extra", "x.y,x_y")),
    new TerretError(
      "ToolNameClash",
      'Cannot register MCP tools "x.y" and "x_y" of server "scripted": they all sanitise to "mcp__scripted__x_y"',
      { details: { name: "mcp__scripted__x_y" } },
    ),
  );
});

Deno.test("structured content is validated against the tool's output schema", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, scripted());
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__weather"), {
    content: '{"temperature":21.5}',
    is_error: false,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__weather", { broken: true }), {
    content:
      'Tool "weather" of MCP server "scripted" returned structured content that does not match its output schema: data/temperature must be number',
    is_error: true,
  });
});

Deno.test("a server that never answers: the call times out, the connection is reset and the next call reconnects", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, { ...scripted(), timeout_ms: 400 });
  const before = Number((await s.registry.call("mcp__scripted__pid")).content);
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__hang"), {
    content:
      'MCP server "scripted" gave no answer within 400 ms; the connection was reset and the next call reconnects',
    is_error: true,
  });
  await until("the wedged server to be killed", async () => !(await alive(before)));
  const after = Number((await s.registry.call("mcp__scripted__pid")).content);
  assert.notEqual(after, before);
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "again" }), {
    content: "again",
    is_error: false,
  });
  await until("the listing after the reconnect", () => s.events.length === 5);
  assert.deepStrictEqual(s.events, [
    { server: "scripted", state: "state:ready" },
    RECONCILED_FIXED,
    { server: "scripted", state: "state:idle", reason: "no answer within 400 ms" },
    { server: "scripted", state: "state:ready" },
    { ...RECONCILED_FIXED, added: [] },
  ]);
});

Deno.test("a server that answers with malformed JSON-RPC is killed and restarted; its call fails at once", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, { ...scripted(), timeout_ms: 10_000 });
  const before = Number((await s.registry.call("mcp__scripted__pid")).content);
  const failed = await s.registry.call("mcp__scripted__malformed");
  assert.deepStrictEqual(failed, {
    content:
      'MCP server "scripted" is unavailable: sent malformed JSON-RPC: this line is not JSON-RPC; a restart is scheduled within 1 s',
    is_error: true,
  });
  // Calls made while the server is down fail fast with the same reason.
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "x" }), failed);
  await until("the restart", () => s.source.connection.state === "ready");
  assert.equal(await alive(before), false);
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "back" }), {
    content: "back",
    is_error: false,
  });
  assert.deepStrictEqual(s.events.slice(2, 4), [
    {
      server: "scripted",
      state: "state:unavailable",
      reason: "sent malformed JSON-RPC: this line is not JSON-RPC",
      retry_in_ms: 50,
    },
    { server: "scripted", state: "state:ready" },
  ]);
});

Deno.test("a server that dies mid-call: the call ends with its exit status and stderr, then it is restarted", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, scripted());
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__crash"), {
    content:
      'MCP server "scripted" is unavailable: exited with code 3 (stderr: scripted server ready (stdio) | call crash | fatal: crashing on purpose); a restart is scheduled within 1 s',
    is_error: true,
  });
  await until("the restart", () => s.source.connection.state === "ready");
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "alive" }), {
    content: "alive",
    is_error: false,
  });
});

Deno.test("a server killed from outside mid-call: the call ends at once and the server is restarted", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, { ...scripted(), timeout_ms: 30_000 });
  const pid = s.source.connection.pid!;
  const hanging = s.registry.call("mcp__scripted__hang");
  await until(
    "the call to reach the server",
    () => w.logger.records.some((record) => record.fields.line === "call hang"),
  );
  Deno.kill(pid, "SIGKILL");
  assert.deepStrictEqual(await hanging, {
    content:
      'MCP server "scripted" is unavailable: was killed by SIGKILL (stderr: scripted server ready (stdio) | call hang); a restart is scheduled within 1 s',
    is_error: true,
  });
  await until("the restart", () => s.source.connection.state === "ready");
  assert.notEqual(s.source.connection.pid, pid);
});

Deno.test("a server that never finishes its handshake fails a required start within the connect timeout", async () => {
  await using w = await mountWorld();
  await assert.rejects(
    startSource(w, { ...scripted("--silent-init"), connect_timeout_ms: 300 }),
    new TerretError(
      "McpUnavailable",
      'Cannot connect to MCP server "scripted": no answer to initialize within 300 ms',
    ),
  );
});

Deno.test("a server not required at boot starts with no tools and keeps retrying with backoff", async () => {
  await using w = await mountWorld();
  await using s = await startSource(w, {
    ...scripted("--silent-init"),
    connect_timeout_ms: 200,
    required: false,
  });
  assert.deepStrictEqual(s.registry.names(), []);
  await until("two failed restarts", () => s.events.length >= 2);
  assert.deepStrictEqual(s.events.slice(0, 2), [
    {
      server: "scripted",
      state: "state:unavailable",
      reason: "no answer to initialize within 200 ms",
      retry_in_ms: 50,
    },
    {
      server: "scripted",
      state: "state:unavailable",
      reason: "no answer to initialize within 200 ms",
      retry_in_ms: 100,
    },
  ]);
});

Deno.test("a program that cannot be spawned, or a cwd outside the workspace, is a clear start error", async () => {
  await using w = await mountWorld();
  await assert.rejects(
    startSource(w, { name: "nope", transport: "stdio", command: "/nonexistent/mcp-server" }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "McpUnavailable" &&
      error.message.startsWith(
        'Cannot connect to MCP server "nope": Cannot spawn "/nonexistent/mcp-server"',
      ),
  );
  await assert.rejects(
    startSource(w, { ...scripted(), cwd: "/" }),
    new TerretError(
      "McpUnavailable",
      'Cannot connect to MCP server "scripted": Cannot run in "/": outside the granted workspaces',
    ),
  );
});
