/**
 * OpenTelemetry end to end: `trt serve` runs with `OTEL_DENO=true` against an OTLP/HTTP receiver written here (JSON
 * protocol), serves a two-step tool turn (Read, then Bash after the client approves it, then an answer) over the
 * socket, and on SIGTERM Deno's exporter flushes. The receiver must hold the turn's spans with their parent/child
 * structure and GenAI attributes, the metrics, and no registered secret anywhere. An invalid endpoint is one
 * warning, not a crash or a flood.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { writeTree } from "./fixtures/composition/tree.ts";
import { within, WsClient } from "./ws/_clients.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));
const API_KEY = "sk-or-v1-telemetry-secret-0123456789abcdef";
const TOKEN = "a-socket-token-for-the-telemetry-test-42";

interface Received {
  readonly path: string;
  readonly body: string;
}

/** An OTLP/HTTP receiver (JSON): records every export. */
function otlpReceiver(): { url: string; received: Received[]; close(): Promise<void> } {
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    received.push({ path: new URL(request.url).pathname, body: await request.text() });
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    close: () => server.shutdown(),
  };
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  status?: { code?: number };
  attributes: { key: string; value: Record<string, unknown> }[];
}

function spansOf(received: readonly Received[]): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const { path, body } of received) {
    if (path !== "/v1/traces") continue;
    const parsed = JSON.parse(body) as {
      resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
    };
    for (const resource of parsed.resourceSpans) {
      for (const scope of resource.scopeSpans) {
        if (scope.scope.name === "terret") spans.push(...scope.spans);
      }
    }
  }
  return spans;
}

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  if (value === undefined) return undefined;
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return value.doubleValue;
  if ("arrayValue" in value) {
    return (value.arrayValue as { values: { stringValue: string }[] }).values.map((v) =>
      v.stringValue
    );
  }
  return value;
}

function metricNames(received: readonly Received[]): string[] {
  const names = new Set<string>();
  for (const { path, body } of received) {
    if (path !== "/v1/metrics") continue;
    const parsed = JSON.parse(body) as {
      resourceMetrics: {
        scopeMetrics: { scope: { name: string }; metrics: { name: string }[] }[];
      }[];
    };
    for (const resource of parsed.resourceMetrics) {
      for (const scope of resource.scopeMetrics) {
        if (scope.scope.name === "terret") {
          for (const metric of scope.metrics) names.add(metric.name);
        }
      }
    }
  }
  return [...names].sort();
}

/** Runs `trt serve` until its socket is up, calls `body` with the port, then stops it with SIGTERM. */
async function serve(
  home: string,
  patch: string,
  env: Record<string, string>,
  body: (port: string) => Promise<void>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "serve", "--home", home, "--patch", patch],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: TOKEN, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  try {
    await within(
      (async () => {
        while (!out.includes("running until SIGINT or SIGTERM\n")) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`serve exited before it was ready: ${out}${await stderr}`);
          out += decoder.decode(value, { stream: true });
        }
      })(),
      90_000,
      "trt serve to come up",
    );
    const port = /ws:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
    assert.ok(port !== undefined, out);
    await body(port);
  } finally {
    child.kill("SIGTERM");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
  }
  return { code: (await child.status).code, stdout: out, stderr: await stderr };
}

function patchText(modelUrl: string, workspace: string): string {
  return [
    "rows:",
    "  - id: llm.main",
    `    config: { model: test/model, base_url: "${modelUrl}", api_key: ${API_KEY}, max_retries: 0 }`,
    "  - id: sandbox",
    "    plugin: sandbox-none",
    "    config: { acknowledge_unsandboxed: true }",
    "  - id: titles",
    "    config: { auto: false }",
    "  - id: workspace",
    `    config: { dirs: ["${workspace}"] }`,
    "  - id: tools.allow",
    "    config: { allow: [Read, Bash] }",
    "  - id: interfaces.ws",
    "    config: { port: 0, token_env: TERRET_TOKEN }",
    "",
  ].join("\n");
}

Deno.test("an OTLP receiver gets the spans and metrics of a two-step tool turn, with no secret in them", async () => {
  await using tree = await writeTree({ "work/notes.txt": "buy milk\n" });
  await using model = await fakeOpenRouter();
  const receiver = otlpReceiver();
  try {
    const notes = tree.path("work/notes.txt");
    const out = tree.path("work/out.txt");
    model.script(
      sseResponse(toolCallTurn([
        { id: "call_read", name: "Read", args: { file_path: notes } },
        { id: "call_bash", name: "Bash", args: { command: `printf done > '${out}'` } },
      ], { usage: { prompt_tokens: 100, completion_tokens: 20, cost: 0.0025 } })),
      sseResponse(textTurn(["The list ", "says buy milk."], {
        usage: { prompt_tokens: 150, completion_tokens: 7, cost: 0.001 },
      })),
    );
    await Deno.writeTextFile(tree.path("patch.yml"), patchText(model.url, tree.path("work")));
    const result = await serve(tree.dir, tree.path("patch.yml"), {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "terret",
    }, async (port) => {
      const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/a1/stream`, {
        token: TOKEN,
      });
      try {
        await client.next();
        client.send({ type: "subscribe", from_seq: 1 });
        client.send({ type: "message", content: "What is on my list?" });
        const requested = await client.readUntil(
          (frame) => (frame.event as { type?: string } | undefined)?.type === "approval/requested",
          60_000,
        );
        const approval = requested.at(-1)!.event as { payload: { request_id: string } };
        client.send({
          type: "approve",
          request_id: approval.payload.request_id,
          decision: "allow",
        });
        await client.readUntil(
          (frame) => (frame.event as { type?: string } | undefined)?.type === "turn/end",
          60_000,
        );
      } finally {
        await client.close();
      }
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await Deno.readTextFile(out), "done");

    const spans = spansOf(receiver.received);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentName = (span: OtlpSpan): string | undefined => byId.get(span.parentSpanId)?.name;
    const tree_ = spans
      .filter((span) => span.name !== "terret.ws.connection")
      .map((span) => `${span.name} <- ${parentName(span) ?? "(root)"}`)
      .sort();
    assert.deepStrictEqual(tree_, [
      "chat test/model <- terret.step",
      "chat test/model <- terret.step",
      "execute_tool Bash <- terret.step",
      "execute_tool Read <- terret.step",
      "invoke_agent <- (root)",
      "terret.step <- invoke_agent",
      "terret.step <- invoke_agent",
    ]);
    // The turn is a trace of its own (not a child of the connection that woke the agent).
    const turn = spans.find((span) => span.name === "invoke_agent")!;
    assert.equal(turn.parentSpanId ?? "", "");
    assert.deepStrictEqual(
      [
        ...new Set(
          spans.filter((span) => span.name !== "terret.ws.connection").map((s) => s.traceId),
        ),
      ],
      [turn.traceId],
    );
    assert.equal(attribute(turn, "gen_ai.agent.id"), "a1");
    assert.equal(attribute(turn, "terret.turn.status"), "completed");
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    assert.deepStrictEqual(
      chats.map((span) => [
        attribute(span, "gen_ai.operation.name"),
        attribute(span, "gen_ai.request.model"),
        attribute(span, "gen_ai.usage.input_tokens"),
        attribute(span, "gen_ai.usage.output_tokens"),
        attribute(span, "terret.usage.cost"),
        attribute(span, "gen_ai.response.finish_reasons"),
        typeof attribute(span, "terret.llm.time_to_first_token_ms"),
      ]).sort(),
      [
        ["chat", "test/model", 100, 20, 0.0025, ["tool_calls"], "number"],
        ["chat", "test/model", 150, 7, 0.001, ["stop"], "number"],
      ],
    );
    const write = spans.find((span) => span.name === "execute_tool Bash")!;
    assert.equal(attribute(write, "gen_ai.tool.name"), "Bash");
    assert.equal(attribute(write, "terret.tool.status"), "ok");
    assert.equal(attribute(write, "terret.approval.decision"), "allow");
    assert.equal(attribute(write, "terret.approval.by"), "client");
    assert.equal(typeof attribute(write, "terret.tool.approval_wait_ms"), "number");
    const read = spans.find((span) => span.name === "execute_tool Read")!;
    assert.equal(attribute(read, "terret.tool.status"), "ok");
    assert.equal(attribute(read, "terret.tool.approval_wait_ms"), undefined);
    const connection = spans.find((span) => span.name === "terret.ws.connection")!;
    assert.equal(attribute(connection, "gen_ai.agent.id"), "a1");

    assert.deepStrictEqual(metricNames(receiver.received), [
      "gen_ai.client.token.usage",
      "terret.agents.active",
      "terret.agents.resident",
      "terret.sandbox.spawn.duration",
      "terret.session.append.latency",
      "terret.turns",
    ]);
    // No registered secret anywhere in anything exported (spans, metrics, logs).
    for (const { body } of receiver.received) {
      assert.equal(body.includes(API_KEY), false, "the model key");
      assert.equal(body.includes(TOKEN), false, "the socket token");
    }
  } finally {
    await receiver.close();
  }
});

Deno.test("an invalid OTEL_EXPORTER_OTLP_ENDPOINT is one warning: serve runs and stops cleanly", async () => {
  await using tree = await writeTree({ "work/notes.txt": "x\n" });
  await using model = await fakeOpenRouter();
  model.script(sseResponse(textTurn("Hi")), sseResponse(textTurn("Again")));
  await Deno.writeTextFile(tree.path("patch.yml"), patchText(model.url, tree.path("work")));
  const result = await serve(tree.dir, tree.path("patch.yml"), {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: "not a url",
  }, async (port) => {
    const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/a1/stream`, {
      token: TOKEN,
    });
    try {
      await client.next();
      client.send({ type: "subscribe", from_seq: 1 });
      for (const content of ["one", "two"]) {
        client.send({ type: "message", content });
        await client.readUntil(
          (frame) => (frame.event as { type?: string } | undefined)?.type === "turn/end",
          60_000,
        );
      }
    } finally {
      await client.close();
    }
  });
  assert.equal(result.code, 0, result.stderr);
  // One structured warning line, and nothing else mentions telemetry or the exporter.
  const lines = result.stderr.split("\n").filter((line) => /OTEL|telemetry|export/i.test(line));
  assert.equal(lines.length, 1, result.stderr);
  const { at: _at, ...warning } = JSON.parse(lines[0]!);
  assert.deepStrictEqual(warning, {
    level: "warn",
    message:
      'telemetry: Cannot export to OTEL_EXPORTER_OTLP_ENDPOINT "not a url": not an http(s) URL; spans and metrics are dropped',
  });
  assert.equal(model.requests.length, 2);
});
