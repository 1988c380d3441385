import assert from "node:assert/strict";
import { createContext, Loader, pluginPermissions, TerretError } from "@terret/hames";
import {
  AgentLoop,
  AgentRegistry,
  memoryStorePlugin,
  SessionEventAppended,
  SessionLog,
  sessionsPlugin,
} from "@terret/core";
import { MemorySessionStore } from "@terret/core/sessions";
import { wsConfig } from "./config.ts";
import { resolveTokens } from "./token_file.ts";
import { WsInterface, WsServiceKey } from "./ws_plugin.ts";
import { WsServer } from "./ws_server.ts";
import { stablePort } from "../../tests/ports.ts";

const TOKEN_A = "token-a-0123456789abcdef";
const TOKEN_B = "token-b-0123456789abcdef";

Deno.test("WsInterface.permissions() declares the listen address, the token variable and the token file's directory", () => {
  const base = wsConfig.parse({
    token_env: "TERRET_TOKEN",
    token_file: "ws/token",
    dir: "/srv/terret",
  });
  assert.deepStrictEqual(pluginPermissions(WsInterface, base), {
    net: ["127.0.0.1:7878"],
    env: ["TERRET_TOKEN"],
    read: ["/srv/terret/ws"],
    write: ["/srv/terret/ws"],
  });
  assert.deepStrictEqual(
    pluginPermissions(
      WsInterface,
      wsConfig.parse({ port: 0, tokens: [{ token: TOKEN_A, agents: ["*"] }] }),
    ),
    { net: ["127.0.0.1"] },
  );
  assert.deepStrictEqual(
    pluginPermissions(
      WsInterface,
      wsConfig.parse({ host: "::1", port: 9000, token_file: "/t/token" }),
    ),
    { net: ["[::1]:9000"], read: ["/t"], write: ["/t"] },
  );
});

Deno.test("wsConfig fills every default and refuses a malformed token", () => {
  assert.deepStrictEqual(wsConfig.parse({}), {
    host: "127.0.0.1",
    port: 7878,
    tokens: [],
    heartbeat_seconds: 30,
    replay_limit: 10_000,
    max_concurrent_replays: 4,
    replay_budget_bytes: 64 * 1024 * 1024,
    queue_limit: 8 * 1024 * 1024,
    send_timeout_seconds: 30,
    max_frame_bytes: 1024 * 1024,
    frame_rate: 100,
    max_connections: 1024,
    max_connections_per_token: 256,
    max_connections_per_agent: 8,
    max_agents_per_token: 1000,
    agents_window_seconds: 3600,
    console: false,
  });
  const bad = wsConfig.safeParse({ tokens: [{ token: "short", agents: ["*"] }] });
  assert.equal(bad.success, false);
  assert.deepStrictEqual(bad.error?.issues.map((issue) => [issue.path.join("."), issue.message]), [
    ["tokens.0.token", "a token is 16 to 512 characters from A-Z a-z 0-9 . _ ~ + / = -"],
  ]);
});

Deno.test("resolveTokens(): listed tokens, the variable when set, else the token file (generated once)", async () => {
  const env = (values: Record<string, string>) => ({ get: (name: string) => values[name] });
  const listed = { token: TOKEN_A, agents: ["orch-*"] };
  assert.deepStrictEqual(
    await resolveTokens(wsConfig.parse({ tokens: [listed], token_env: "T" }), env({ T: TOKEN_B })),
    {
      grants: [listed, { token: TOKEN_B, agents: ["*"] }],
      report: { configured: 1, env: "T", file: undefined, generated: undefined },
    },
  );
  await assert.rejects(
    resolveTokens(wsConfig.parse({ token_env: "T" }), env({ T: "no spaces allowed here!" })),
    new TerretError(
      "TokenInvalid",
      "Cannot use $T as the socket token: a token is 16 to 512 characters from A-Z a-z 0-9 . _ ~ + / = -",
    ),
  );
  await assert.rejects(
    resolveTokens(wsConfig.parse({ token_env: "T" }), env({})),
    new TerretError(
      "NoToken",
      "Cannot start the socket: no token is configured (list tokens, set the variable token_env names, or " +
        "name a token_file)",
    ),
  );
  const home = await Deno.makeTempDir();
  try {
    const config = wsConfig.parse({ token_env: "T", token_file: "ws/token", dir: home });
    const first = await resolveTokens(config, env({}));
    const token = (await Deno.readTextFile(`${home}/ws/token`)).trim();
    assert.deepStrictEqual(first, {
      grants: [{ token, agents: ["*"] }],
      report: {
        configured: 0,
        env: undefined,
        file: { path: `${home}/ws/token`, created: true },
        generated: token,
      },
    });
    const again = await resolveTokens(config, env({}));
    assert.deepStrictEqual(again.report.generated, undefined);
    assert.deepStrictEqual(again.grants, first.grants);
    // The variable, when set, wins over the file.
    assert.deepStrictEqual(
      (await resolveTokens(config, env({ T: TOKEN_B }))).grants,
      [{ token: TOKEN_B, agents: ["*"] }],
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/** Boots sessions, agents, the loop and the socket with `config` through a Loader. */
async function boot(config: unknown) {
  const ctx = createContext({ mode: "test" });
  const loader = new Loader(ctx);
  await loader.load([
    { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
    { id: "sessions", plugin: sessionsPlugin, config: {} },
    { id: "agents", plugin: AgentRegistry, config: {} },
    { id: "loop", plugin: AgentLoop, config: {} },
    { id: "interfaces.ws", plugin: WsInterface, config },
  ]);
  return { ctx, loader, ws: () => ctx.get(WsServiceKey) };
}

function connect(url: string, token: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  return new Promise((resolve, reject) => {
    socket.onopen = () => resolve(socket);
    socket.onerror = () => reject(new Error(`Cannot connect to ${url}`));
  });
}

function closed(socket: WebSocket): Promise<[number, string]> {
  return new Promise((resolve) => {
    socket.onclose = (event) => resolve([event.code, event.reason]);
  });
}

Deno.test("a live reconfigure closes connections whose token no longer grants their agent, and rebinds a new port", async () => {
  const tokens = [{ token: TOKEN_A, agents: ["*"] }, { token: TOKEN_B, agents: ["b-*"] }];
  const { ctx, loader, ws } = await boot({ port: 0, tokens });
  try {
    const first = ws();
    assert.deepStrictEqual(first.tokens(), {
      configured: 2,
      env: undefined,
      file: undefined,
      generated: undefined,
    });
    const url = (agent: string) => `${first.url}/v1/agents/${agent}/stream`;
    const keep = await connect(url("b-1"), TOKEN_A);
    const revoke = await connect(url("b-2"), TOKEN_B);
    const revoked = closed(revoke);
    await loader.reconfigure("interfaces.ws", { port: 0, tokens: [tokens[0]] });
    assert.deepStrictEqual(await revoked, [1008, "token revoked"]);
    assert.equal(keep.readyState, WebSocket.OPEN);
    // A changed address: the new one is bound first, then the old connections are closed with 1001.
    const moved = closed(keep);
    const port = stablePort();
    await loader.reconfigure("interfaces.ws", { port, tokens });
    assert.deepStrictEqual(await moved, [1001, "server address changed"]);
    assert.equal(ws().port, port);
    const again = await connect(`${ws().url}/v1/agents/b-1/stream`, TOKEN_B);
    const done = closed(again);
    again.close();
    await done;
  } finally {
    await ctx.dispose();
  }
});

Deno.test("WsServer.start() on an address in use rejects and leaves no listener behind", async () => {
  await using ctx = createContext({ mode: "test" });
  const store = new MemorySessionStore();
  const sessions = new SessionLog(ctx, store);
  await using taken = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("taken"),
  );
  const before = ctx.listenerCount(SessionEventAppended);
  await assert.rejects(
    WsServer.start({
      ctx,
      sessions,
      agents: {
        open: () => Promise.reject(new Error("unused")),
        state: () => ({ status: "idle", resident: false }),
        figures: () => ({ resident: 0, busy: 0, max: 1 }),
      },
      config: wsConfig.parse({
        port: taken.addr.port,
        tokens: [{ token: TOKEN_A, agents: ["*"] }],
      }),
    }),
    {
      name: "TerretError",
      code: "AddrInUse",
      message:
        `Cannot listen on 127.0.0.1:${taken.addr.port}: the address is already in use (another ` +
        `server holds it; stop it, or set the row's "port" key to a free port, 0 for any)`,
    },
  );
  assert.equal(ctx.listenerCount(SessionEventAppended), before);
  await store.close();
});
