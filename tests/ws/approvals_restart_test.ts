/**
 * Approvals across a crash, with `trt serve` as a real process: Bash under the acknowledged `none` sandbox asks
 * (approval `always`), the process is SIGKILLed while the call waits, a second process boots on the same Terret
 * home, and a new connection sees the open `approval/requested` in replay, answers it, and the command runs once
 * with its result logged; and the same with the answer given before the kill (the call held after the gate by a
 * test plugin, as if the process died between the durable verdict and the handler): the restarted process reads
 * the verdict from the log and runs the command once, asking nothing. The model is a fake OpenRouter in this test
 * process, so both processes share its script.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { fakeOpenRouter, sseResponse, textTurn, toolCallTurn } from "@terret/core/testing";
import { type Frame, WsClient } from "./_clients.ts";
import { fileURLToPath } from "node:url";
import { serve } from "./_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const TOKEN = "approvals-restart-token-0123456789";

const eventOf = (frame: Frame): SessionEvent => frame.event as SessionEvent;
const isType = (type: string) => (frame: Frame): boolean =>
  frame.type === "event" && eventOf(frame).type === type;

async function patchFor(dir: string, model: string): Promise<string> {
  await Deno.mkdir(`${dir}/work`, { recursive: true });
  const path = `${dir}/approvals.yml`;
  await Deno.writeTextFile(
    path,
    [
      "rows:",
      "  - id: workspace",
      `    config: { dirs: [${dir}/work] }`,
      "  - id: sandbox",
      "    plugin: sandbox-none",
      "    config: { acknowledge_unsandboxed: true }",
      "  - id: llm.main",
      `    config: { model: test/model, base_url: ${model}, api_key: sk-test, max_retries: 0 }`,
      "  - id: tools.allow",
      "    config: { allow: [Bash] }",
      // The fake model scripts the turn's requests only: no title call.
      "  - id: titles",
      "    config: { auto: false }",
      "  - id: interfaces.ws",
      `    config: { port: 0, tokens: [{ token: ${TOKEN}, agents: ["*"] }] }`,
      "",
    ].join("\n"),
  );
  return path;
}

Deno.test("trt serve killed while Bash waits for approval: after a restart the answer runs the command once", async () => {
  await using tree = await writeTree({});
  await using model = await fakeOpenRouter();
  model.script(
    sseResponse(
      toolCallTurn([{ id: "call_1", name: "Bash", args: { command: "echo ran >> ran.txt" } }]),
    ),
    sseResponse(textTurn("It ran.")),
  );
  const patch = await patchFor(tree.dir, model.url);
  const url = (port: number) => `ws://127.0.0.1:${port}/v1/agents/op/stream`;

  const first = await serve(tree.dir, [patch]);
  try {
    const before = await WsClient.open(url(first.port), { token: TOKEN });
    assert.equal((await before.next()).type, "hello");
    before.send({ type: "subscribe", from_seq: 1 });
    before.send({ type: "message", content: "Run it." });
    const asked = (await before.readUntil(isType("approval/requested"), 60_000)).at(-1)!;
    assert.deepStrictEqual(eventOf(asked).payload, {
      request_id: (eventOf(asked).payload as { request_id: string }).request_id,
      call: { id: "call_1", name: "Bash", args: { command: "echo ran >> ran.txt" } },
      reason: 'tool "Bash" asks before every call (approval always)',
      approval: "always",
    });
  } finally {
    await first.kill();
  }
  await assert.rejects(Deno.stat(`${tree.dir}/work/ran.txt`), Deno.errors.NotFound);

  const second = await serve(tree.dir, [patch]);
  try {
    const after = await WsClient.open(url(second.port), { token: TOKEN });
    assert.equal((await after.next()).type, "hello");
    after.send({ type: "subscribe", from_seq: 1 });
    const replayed = await after.readUntil(isType("approval/requested"), 60_000);
    const requestId = (eventOf(replayed.at(-1)!).payload as { request_id: string }).request_id;
    after.send({ type: "approve", request_id: requestId, decision: "allow", ref: "a" });
    const rest = await after.readUntil(isType("turn/end"), 60_000);
    assert.deepStrictEqual(rest.filter((frame) => frame.type !== "event"), [
      { type: "ack", ref: "a" },
    ]);
    const events = [...replayed, ...rest].filter((frame) => frame.type === "event").map(eventOf);
    assert.deepStrictEqual(
      events.filter((event) => event.type.startsWith("approval/")).map((event) => [
        event.type,
        (event.payload as { request_id: string }).request_id,
        (event.payload as { decision?: string }).decision,
        (event.payload as { by?: { kind: string } }).by?.kind,
      ]),
      [
        ["approval/requested", requestId, undefined, undefined],
        ["approval/resolved", requestId, "allow", "client"],
      ],
    );
    const results = events.filter((event) => event.type === "tool/result").map((event) =>
      event.payload
    );
    assert.deepStrictEqual(results, [{
      id: "call_1",
      name: "Bash",
      content: (results[0] as { content: unknown }).content,
      is_error: false,
    }]);
    assert.deepStrictEqual(eventOf(rest.at(-1)!).payload, { status: "completed" });
    assert.equal(await Deno.readTextFile(`${tree.dir}/work/ran.txt`), "ran\n");
    assert.equal(model.requests.length, 2);
    await after.close();
  } finally {
    const { code } = await second.stop();
    assert.equal(code, 0);
  }
});

const HOLD = fileURLToPath(new URL("../fixtures/approvals/hold_calls.ts", import.meta.url));

Deno.test("trt serve killed after the answer but before the command ran: the restart runs it once from the logged verdict", async () => {
  await using tree = await writeTree({});
  await using model = await fakeOpenRouter();
  model.script(
    sseResponse(
      toolCallTurn([{ id: "call_1", name: "Bash", args: { command: "echo ran >> ran.txt" } }]),
    ),
    sseResponse(textTurn("It ran.")),
  );
  const patch = await patchFor(tree.dir, model.url);
  const marker = `${tree.dir}/hold`;
  await Deno.mkdir(`${tree.dir}/profiles/held`, { recursive: true });
  await Deno.writeTextFile(
    `${tree.dir}/profiles/held/profile.yml`,
    [
      "bundles: [base]",
      "settings:",
      "  llm: { model: test/model }",
      "  sandbox: { image: terret/sandbox:test }",
      "  sessions: { path: sessions/terret.db }",
      "plugins:",
      `  test-hold-calls: ${HOLD}`,
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(
    `${tree.dir}/profiles/held/patch.yml`,
    `rows:\n  - { id: hold, plugin: test-hold-calls, after: tools, config: { marker: ${marker} } }\n`,
  );
  const args = ["--profile", "held", "--allow-config-code"];
  const url = (port: number) => `ws://127.0.0.1:${port}/v1/agents/op/stream`;
  await Deno.writeTextFile(marker, "");

  const first = await serve(tree.dir, [patch], { args });
  let requestId: string;
  try {
    const before = await WsClient.open(url(first.port), { token: TOKEN });
    assert.equal((await before.next()).type, "hello");
    before.send({ type: "subscribe", from_seq: 1 });
    before.send({ type: "message", content: "Run it." });
    const asked = (await before.readUntil(isType("approval/requested"), 60_000)).at(-1)!;
    requestId = (eventOf(asked).payload as { request_id: string }).request_id;
    before.send({ type: "approve", request_id: requestId, decision: "allow", ref: "a" });
    const answered: Frame[] = [];
    while (!answered.some(isType("approval/resolved")) || !answered.some((f) => f.type === "ack")) {
      answered.push(await before.next(60_000));
    }
    assert.deepStrictEqual(answered.filter((frame) => frame.type !== "event"), [{
      type: "ack",
      ref: "a",
    }]);
  } finally {
    await first.kill();
  }
  await assert.rejects(Deno.stat(`${tree.dir}/work/ran.txt`), Deno.errors.NotFound);
  await Deno.remove(marker);

  const second = await serve(tree.dir, [patch], { args });
  try {
    const after = await WsClient.open(url(second.port), { token: TOKEN });
    assert.equal((await after.next()).type, "hello");
    after.send({ type: "subscribe", from_seq: 1 });
    const frames = await after.readUntil(isType("turn/end"), 60_000);
    const events = frames.filter((frame) => frame.type === "event").map(eventOf);
    assert.deepStrictEqual(
      events.filter((event) => event.type.startsWith("approval/")).map((event) => [
        event.type,
        (event.payload as { request_id: string }).request_id,
      ]),
      [["approval/requested", requestId], ["approval/resolved", requestId]],
    );
    assert.deepStrictEqual(
      events.filter((event) => event.type === "tool/call").map((event) => event.payload),
      [
        { id: "call_1", name: "Bash", args: { command: "echo ran >> ran.txt" } },
        { id: "call_1", name: "Bash", args: { command: "echo ran >> ran.txt" }, resumed: true },
      ],
    );
    const results = events.filter((event) => event.type === "tool/result");
    assert.deepStrictEqual(
      results.map((event) => (event.payload as { is_error: boolean }).is_error),
      [
        false,
      ],
    );
    assert.deepStrictEqual(eventOf(frames.at(-1)!).payload, { status: "completed" });
    assert.equal(await Deno.readTextFile(`${tree.dir}/work/ran.txt`), "ran\n");
    assert.equal(model.requests.length, 2);
    await after.close();
  } finally {
    const { code } = await second.stop();
    assert.equal(code, 0);
  }
});
