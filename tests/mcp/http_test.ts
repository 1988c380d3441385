/**
 * The MCP client over Streamable HTTP: against the everything server (its own HTTP mode, loopback only) and the
 * scripted fixture server, including a server killed mid-call, one that never answers, one that answers with
 * malformed JSON, and tools/list_changed delivered on the notification stream.
 */
import assert from "node:assert/strict";
import {
  mountWorld,
  prefetchServers,
  startEverythingHttp,
  startScriptedHttp,
  startSource,
  until,
} from "./_world.ts";

const EVERYTHING_TOOLS = [
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

Deno.test("the everything server over Streamable HTTP: its tools registered, called, and its errors mapped", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  await using peer = await startEverythingHttp();
  await using s = await startSource(w, { name: "everything", transport: "http", url: peer.url });
  assert.deepStrictEqual(s.registry.names(), EVERYTHING_TOOLS);
  // Its tools/list_changed right after initialisation goes out before the client's notification stream is open,
  // so the listing made on connect is the only one; the task-only tool is left out.
  assert.deepStrictEqual(s.events, [
    { server: "everything", state: "state:ready" },
    {
      server: "everything",
      added: EVERYTHING_TOOLS,
      removed: [],
      changed: [],
      clashes: [],
      skipped: ["simulate-research-query"],
      refused: [],
    },
  ]);
  assert.deepStrictEqual(await s.registry.call("mcp__everything__get-sum", { a: 2, b: 40 }), {
    content: "The sum of 2 and 40 is 42.",
    is_error: false,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__everything__echo", { message: "über" }), {
    content: "Echo: über",
    is_error: false,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__everything__get-sum", { a: 1 }), {
    content:
      "MCP error -32602: Input validation error: Invalid arguments for tool get-sum: Invalid input: expected number, received undefined at b",
    is_error: true,
  });
  const image = await s.registry.call("mcp__everything__get-tiny-image");
  assert.deepStrictEqual(
    (image.content as { type: string; media_type?: string; text?: string }[]).map((part) =>
      part.type === "image" ? `image ${part.media_type}` : part.text
    ),
    [
      "Here's the image you requested:",
      "image image/png",
      "The image above is the MCP logo.",
    ],
  );
});

Deno.test("an HTTP server killed mid-call: the call ends with a clear error, and the client reconnects once it is back", async () => {
  await prefetchServers();
  await using w = await mountWorld();
  let peer = await startEverythingHttp();
  try {
    await using s = await startSource(w, {
      name: "everything",
      transport: "http",
      url: peer.url,
      timeout_ms: 20_000,
      restart: { initial_ms: 200, max_ms: 400 },
    });
    const posts = () => peer.output().split("Received MCP POST request").length - 1;
    // initialize, notifications/initialized and tools/list came first.
    await until("the start-up requests in the server's log", () => posts() === 3);
    const call = s.registry.call("mcp__everything__trigger-long-running-operation", {
      duration: 15,
      steps: 3,
    });
    await until("the call to reach the server", () => posts() === 4);
    await peer.kill();
    const failed = await call;
    // How the transport saw the kill depends on where the request was (its response stream broke and could not
    // be resumed; its connection was reset; a retry on a fresh connection was refused): the reason says which.
    assert.equal(failed.is_error, true);
    assert.match(
      failed.content as string,
      /^MCP server "everything" is unavailable: (its event stream broke \(.+\) and could not be resumed \(.+\)|fetch failed: .+); a restart is scheduled within 1 s$/,
    );
    // Not the call's own timeout (20 s): the lost stream ended it. While the server is down, calls fail fast.
    assert.deepStrictEqual(
      await s.registry.call("mcp__everything__get-sum", { a: 1, b: 1 }),
      failed,
    );
    peer = await startEverythingHttp(peer.port);
    await until("the reconnection", () => s.source.connection.state === "ready", 30_000);
    assert.deepStrictEqual(await s.registry.call("mcp__everything__get-sum", { a: 1, b: 1 }), {
      content: "The sum of 1 and 1 is 2.",
      is_error: false,
    });
  } finally {
    await peer.kill();
  }
});

Deno.test("over HTTP: a call that never answers times out and resets; malformed JSON is an error; list_changed is live", async () => {
  await using w = await mountWorld();
  await using peer = await startScriptedHttp();
  await using s = await startSource(w, {
    name: "scripted",
    transport: "http",
    url: peer.url,
    timeout_ms: 400,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "a" }), {
    content: "a",
    is_error: false,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__hang"), {
    content:
      'MCP server "scripted" gave no answer within 400 ms; the connection was reset and the next call reconnects',
    is_error: true,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__echo", { text: "b" }), {
    content: "b",
    is_error: false,
  });
  assert.deepStrictEqual(await s.registry.call("mcp__scripted__malformed"), {
    content:
      `MCP server "scripted" is unavailable: sent malformed JSON-RPC: Unexpected token 'h', "this line i"... is not valid JSON; a restart is scheduled within 1 s`,
    is_error: true,
  });
  await until("the restart", () => s.source.connection.state === "ready");

  // Each connection listed the tools: at start, on the reconnect after the timeout, after the restart.
  const reconciled = () => s.events.filter((event) => "added" in (event as object)).length;
  await until("the listing after the restart", () => reconciled() === 3);
  await s.registry.call("mcp__scripted__set_roster", { tools: [{ name: "omega" }] });
  await until("list_changed over the notification stream", () => reconciled() === 4);
  assert.deepStrictEqual(s.events.at(-1), {
    server: "scripted",
    added: ["mcp__scripted__omega"],
    removed: [],
    changed: [],
    clashes: [],
    skipped: [],
    refused: [],
  });
});
