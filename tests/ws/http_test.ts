/**
 * The socket's HTTP surface (docs/protocol.md §1–§3): routes, the agent-id shape, auth before resolution with one
 * indistinguishable 401, the browser subprotocol, the connection cap, and `hello`.
 */
import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { RawClient, withoutDate, WsClient } from "./_clients.ts";
import { ORCH_TOKEN, startHarness, TOKEN } from "./_harness.ts";

const decoder = new TextDecoder();

function get(path: string, port: number, headers: Record<string, string> = {}): string {
  return [
    `GET ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    "Connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ].join("\r\n");
}

const UPGRADE = {
  Upgrade: "websocket",
  Connection: "Upgrade",
  "Sec-WebSocket-Key": btoa("terret-raw-12345"),
  "Sec-WebSocket-Version": "13",
};

/** An upgrade request that closes after the answer (so the raw exchange reads to the end). */
function upgrade(path: string, port: number, headers: Record<string, string> = {}): string {
  return [
    `GET ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    ...Object.entries({ ...UPGRADE, ...headers }).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ].join("\r\n");
}

/** Sends an upgrade request and returns the raw answer when it is not a 101 (the server closes after it). */
async function refused(port: number, request: string): Promise<string> {
  const client = await RawClient.connect(port);
  try {
    await client.write(new TextEncoder().encode(request));
    const head = await client.readHead();
    assert.notEqual(head.status, 101, "the server upgraded a request it should have refused");
    const body = await client.readExactly(Number(head.headers.get("content-length")));
    return withoutDate(new TextEncoder().encode(`${head.lines.join("\r\n")}\r\n\r\n`)) +
      decoder.decode(body);
  } finally {
    client.close();
  }
}

const UNAUTHORIZED = [
  "HTTP/1.1 401 Unauthorized",
  "content-type: text/plain; charset=utf-8",
  'www-authenticate: Bearer realm="terret"',
  "content-length: 12",
  "date: <date>",
  "",
  "unauthorized",
].join("\r\n");

Deno.test("GET /healthz answers 200 without auth; any other path 404", async () => {
  await using h = await startHarness();
  const health = await fetch(`http://127.0.0.1:${h.port}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(health.headers.get("content-type"), "application/json");
  assert.equal(await health.text(), '{"status":"ok"}');
  for (const path of ["/", "/v1/agent", "/v1/agents/a1/stream/x", "/v1/agents/a/b/stream"]) {
    const response = await fetch(`http://127.0.0.1:${h.port}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.deepStrictEqual(
      [path, response.status, response.headers.get("content-type"), await response.text()],
      [path, 404, "text/plain; charset=utf-8", "not found"],
    );
  }
  const post = await fetch(`http://127.0.0.1:${h.port}/healthz`, { method: "POST", body: "x" });
  assert.deepStrictEqual([post.status, await post.text()], [404, "not found"]);
  assert.deepStrictEqual(h.agents.calls, []);
});

Deno.test("a malformed agent id answers 400 before auth, with or without a token", async () => {
  await using h = await startHarness();
  const bad = ["", "-lead", ".hidden", "a%20b", "%41", "a".repeat(129), "%C3%A9t%C3%A9", "a:b"];
  for (const id of bad) {
    for (const headers of [{}, { Authorization: `Bearer ${TOKEN}` }]) {
      const answer = await refused(h.port, upgrade(`/v1/agents/${id}/stream`, h.port, headers));
      assert.deepStrictEqual(
        [id, answer],
        [
          id,
          [
            "HTTP/1.1 400 Bad Request",
            "content-type: text/plain; charset=utf-8",
            "content-length: 16",
            "date: <date>",
            "",
            "invalid agent id",
          ].join("\r\n"),
        ],
      );
    }
  }
  // The longest well-formed id is accepted.
  const { client, hello } = await h.connect("a".repeat(128));
  assert.equal(hello.agent_id, "a".repeat(128));
  await client.close();
  assert.deepStrictEqual(h.agents.calls, [{ verb: "open", agent_id: "a".repeat(128) }]);
});

Deno.test("missing, wrong and not-granted tokens get byte-identical 401s, for an existing and a never-seen agent", async () => {
  await using h = await startHarness();
  // orch-8.known exists: a granted token has connected to it.
  const { client } = await h.connect("orch-8.known");
  await client.close();
  const attempts: Record<string, Record<string, string>> = {
    "no token": {},
    "wrong token": { Authorization: "Bearer wrong-token-000000000000000000" },
    "a prefix of the right token": { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
    "the right token plus a character": { Authorization: `Bearer ${TOKEN}x` },
    "lower-case scheme, wrong token": { Authorization: "bearer wrong-token-000000000000000000" },
    "basic auth": { Authorization: `Basic ${btoa(`u:${TOKEN}`)}` },
    "empty bearer": { Authorization: "Bearer " },
    "token not granted this agent": { Authorization: `Bearer ${ORCH_TOKEN}` },
    "wrong subprotocol token": {
      "Sec-WebSocket-Protocol": "terret.v1, bearer.wrong-token-000000000000000000",
    },
    "not-granted subprotocol token": {
      "Sec-WebSocket-Protocol": `terret.v1, bearer.${ORCH_TOKEN}`,
    },
    "bearer subprotocol without terret.v1": { "Sec-WebSocket-Protocol": `bearer.${TOKEN}` },
  };
  for (const agent of ["orch-8.known", "orch-8.never-seen"]) {
    for (const [name, headers] of Object.entries(attempts)) {
      const answer = await refused(h.port, upgrade(`/v1/agents/${agent}/stream`, h.port, headers));
      assert.deepStrictEqual([agent, name, answer], [agent, name, UNAUTHORIZED]);
    }
    // A plain GET (no upgrade) without a token is refused the same way.
    const plain = withoutDate(
      await RawClient.exchange(h.port, get(`/v1/agents/${agent}/stream`, h.port)),
    );
    assert.deepStrictEqual(
      [agent, plain],
      [agent, UNAUTHORIZED.replace("date: <date>", "date: <date>\r\nconnection: close")],
    );
  }
  // Auth came before resolution: only the granted connection ever reached the agents.
  assert.deepStrictEqual(h.agents.calls, [{ verb: "open", agent_id: "orch-8.known" }]);
});

Deno.test("a granted token connects by header or by the browser subprotocol, which the server selects", async () => {
  await using h = await startHarness();
  const header = await WsClient.open(h.url("orch-7.worker-2"), { token: ORCH_TOKEN });
  assert.equal(header.protocol, "");
  assert.deepStrictEqual(await header.next(), {
    type: "hello",
    protocol: 1,
    agent_id: "orch-7.worker-2",
    session_id: "orch-7.worker-2",
    head_seq: 1,
  });
  await header.close();
  const browser = await WsClient.open(h.url("orch-7.worker-3"), {
    protocols: ["terret.v1", `bearer.${ORCH_TOKEN}`],
  });
  assert.equal(browser.protocol, "terret.v1");
  assert.deepStrictEqual(await browser.next(), {
    type: "hello",
    protocol: 1,
    agent_id: "orch-7.worker-3",
    session_id: "orch-7.worker-3",
    head_seq: 1,
  });
  await browser.close();
  // When both are present the header is the one checked.
  const both = await refused(
    h.port,
    upgrade("/v1/agents/orch-7.worker-3/stream", h.port, {
      Authorization: "Bearer wrong-token-000000000000000000",
      "Sec-WebSocket-Protocol": `terret.v1, bearer.${ORCH_TOKEN}`,
    }),
  );
  assert.equal(both, UNAUTHORIZED);
});

Deno.test("an authorized request that is not an upgrade gets 426", async () => {
  await using h = await startHarness();
  const answer = withoutDate(
    await RawClient.exchange(
      h.port,
      get("/v1/agents/a1/stream", h.port, { Authorization: `Bearer ${TOKEN}` }),
    ),
  );
  assert.equal(
    answer,
    [
      "HTTP/1.1 426 Upgrade Required",
      "content-type: text/plain; charset=utf-8",
      "upgrade: websocket",
      "content-length: 26",
      "date: <date>",
      "connection: close",
      "",
      "websocket upgrade required",
    ].join("\r\n"),
  );
  assert.deepStrictEqual(h.agents.calls, []);
});

Deno.test("the connection cap and an agent that cannot be had answer 503 after auth", async () => {
  await using h = await startHarness({ max_connections: 1 });
  const { client } = await h.connect("a1");
  const full = await refused(
    h.port,
    upgrade("/v1/agents/a2/stream", h.port, { Authorization: `Bearer ${TOKEN}` }),
  );
  assert.equal(full.split("\r\n\r\n")[1], "too many connections");
  assert.equal(full.split("\r\n")[0], "HTTP/1.1 503 Service Unavailable");
  // Unauthenticated requests still get the 401, not a hint that the server is full.
  assert.equal(await refused(h.port, upgrade("/v1/agents/a2/stream", h.port)), UNAUTHORIZED);
  await client.close();

  h.agents.refuseOpen = new TerretError(
    "AgentsBusy",
    'Cannot make agent "a3" resident: every resident agent is busy',
  );
  const unavailable = await refused(
    h.port,
    upgrade("/v1/agents/a3/stream", h.port, { Authorization: `Bearer ${TOKEN}` }),
  );
  assert.equal(unavailable.split("\r\n")[0], "HTTP/1.1 503 Service Unavailable");
  assert.equal(unavailable.split("\r\n\r\n")[1], "agent unavailable: AgentsBusy");
});

Deno.test("hello reports the head of an existing session", async () => {
  await using h = await startHarness();
  const first = await h.connect("a1");
  assert.equal(first.hello.head_seq, 1);
  await first.client.close();
  await h.append("a1", { type: "user/message", payload: { content: "hi" } }, {
    type: "turn/start",
    payload: {},
  });
  const second = await h.connect("a1");
  assert.deepStrictEqual(second.hello, {
    type: "hello",
    protocol: 1,
    agent_id: "a1",
    session_id: "a1",
    head_seq: 3,
  });
  await second.client.close();
});
