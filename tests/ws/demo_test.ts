/**
 * The README's no-key demo, as written: `trt serve` with `examples/demo/patch.yml` (the recorded tool turn through
 * the replay middleware), and `examples/orchestrator.ts` as a real process: it connects, sends its message, prints
 * every event of the tool-using turn and exits when the turn ends; run again with `--from`, it reconnects from a
 * seq and prints only what follows.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { writeTree } from "../fixtures/composition/tree.ts";
import { within } from "./_clients.ts";
import { ROOT, serve } from "./_serve.ts";
import { stablePort } from "../ports.ts";

const ORCHESTRATOR = fileURLToPath(new URL("../../examples/orchestrator.ts", import.meta.url));
const NOTES_DIR = "/tmp/terret-demo";

async function orchestrator(home: string, args: readonly string[]): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ORCHESTRATOR, ...args],
    cwd: ROOT,
    env: { TERRET_HOME: home, TERRET_TOKEN: "" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(decoder.decode(output.stderr), "");
  assert.equal(output.code, 0);
  return decoder.decode(output.stdout).split("\n");
}

Deno.test("the no-key demo: a recorded tool-using turn served and watched by the example orchestrator", async () => {
  // The demo reads /tmp/terret-demo/notes.txt, as the README sets it up; the test leaves it as it found it.
  const existed = await Deno.stat(`${NOTES_DIR}/notes.txt`).then(() => true, () => false);
  if (!existed) {
    await Deno.mkdir(NOTES_DIR, { recursive: true });
    await Deno.writeTextFile(`${NOTES_DIR}/notes.txt`, "buy milk\ncall the plumber\n");
  }
  await using tree = await writeTree({
    "port.yml": [
      "rows:",
      "  - id: interfaces.ws", // any free port, so the test never collides with a server on 7878
      "    config: { port: 0, token_env: TERRET_TOKEN, token_file: ws/token, dir: !setting terret.home }",
      "  - id: sandbox", // the demo runs no program: no docker needed
      "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
      "",
    ].join("\n"),
  });
  const served = await serve(tree.dir, ["examples/demo/patch.yml", tree.path("port.yml")]);
  try {
    const url = `ws://127.0.0.1:${served.port}`;
    const notes = (await Deno.readTextFile(`${NOTES_DIR}/notes.txt`)).split("\n").filter((l) =>
      l !== ""
    );
    const numbered = notes.map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join("\n");
    const lines = await orchestrator(tree.dir, [
      "--url",
      url,
      "demo",
      "What is on my list? It is in /tmp/terret-demo/notes.txt.",
    ]);
    assert.deepStrictEqual(lines, [
      "-- connected to demo (session demo, head 0)",
      `#1 session/created   ${createdMeta()}`,
      '#2 input/queued      {"kind":"message","content":"What is on my list? It is in /tmp/terret-demo/notes.txt.","wake":true}',
      '#3 turn/start        {"agent_id":"demo"}',
      '#4 step/start        {"step":1}',
      "#5 user/message      What is on my list? It is in /tmp/terret-demo/notes.txt.",
      `#6 assistant/chunk   "I'll read your notes."`,
      `#7 assistant/message I'll read your notes. Read({"file_path":"/tmp/terret-demo/notes.txt"})`,
      '#8 tool/call         Read({"file_path":"/tmp/terret-demo/notes.txt"})',
      `#9 tool/result       Read: ${JSON.stringify(numbered)}`,
      '#10 step/end          tool_calls, {"input_tokens":912,"output_tokens":41,"cached_tokens":0,"cost":0.003351}',
      '#11 step/start        {"step":2}',
      '#12 assistant/chunk   "Your list has two items: buy milk, and call the plumber."',
      "#13 assistant/message Your list has two items: buy milk, and call the plumber.",
      '#14 step/end          stop, {"input_tokens":987,"output_tokens":17,"cached_tokens":912,"cost":0.003216}',
      "#15 turn/end          completed",
      "",
    ]);
    // Reconnecting from a seq: only what follows, and a second turn for a second message.
    const again = await orchestrator(tree.dir, [
      "--url",
      url,
      "--from",
      "13",
      "demo",
      "And again?",
    ]);
    assert.deepStrictEqual(again, [
      "-- connected to demo (session demo, head 15)",
      "#13 assistant/message Your list has two items: buy milk, and call the plumber.",
      '#14 step/end          stop, {"input_tokens":987,"output_tokens":17,"cached_tokens":912,"cost":0.003216}',
      "#15 turn/end          completed",
      '#16 input/queued      {"kind":"message","content":"And again?","wake":true}',
      '#17 turn/start        {"agent_id":"demo"}',
      '#18 step/start        {"step":1}',
      "#19 user/message      And again?",
      ...lines.slice(6, 15).map((line, i) => line.replace(/^#\d+ /, `#${20 + i} `)),
      "#29 turn/end          completed",
      "",
    ]);
  } finally {
    const { code } = await served.stop();
    assert.equal(code, 0);
    if (!existed) await Deno.remove(NOTES_DIR, { recursive: true });
  }
});

Deno.test("the example orchestrator reconnects after a restart and subscribes from its last seq + 1", async () => {
  const existed = await Deno.stat(`${NOTES_DIR}/notes.txt`).then(() => true, () => false);
  if (!existed) {
    await Deno.mkdir(NOTES_DIR, { recursive: true });
    await Deno.writeTextFile(`${NOTES_DIR}/notes.txt`, "buy milk\ncall the plumber\n");
  }
  // Both processes listen on it in turn: a port no parallel test's socket is handed in between.
  const port = stablePort();
  await using tree = await writeTree({
    "port.yml": [
      "rows:",
      "  - id: interfaces.ws", // one fixed free port, the same for both processes
      `    config: { port: ${port}, token_file: ws/token, dir: !setting terret.home }`,
      "  - id: sandbox",
      "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
      "",
    ].join("\n"),
  });
  const patches = ["examples/demo/patch.yml", tree.path("port.yml")];
  let served = await serve(tree.dir, patches);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ORCHESTRATOR,
      "--follow",
      "--url",
      `ws://127.0.0.1:${port}`,
      "demo",
      "What is on my list? It is in /tmp/terret-demo/notes.txt.",
    ],
    cwd: ROOT,
    env: { TERRET_HOME: tree.dir, TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const until = (text: string) =>
    within(
      (async () => {
        while (!out.includes(text)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the orchestrator exited: ${out}`);
          out += value;
        }
      })(),
      30_000,
      `the orchestrator to print ${JSON.stringify(text)}`,
    );
  try {
    await until("#15 turn/end          completed\n");
    await served.stop();
    await until("-- connection lost; reconnecting in ");
    served = await serve(tree.dir, patches);
    await until("(session demo, head 15)\n");
  } finally {
    await served.stop();
    child.kill("SIGTERM");
    await child.status;
    await child.stderr.cancel();
    await reader.cancel();
    if (!existed) await Deno.remove(NOTES_DIR, { recursive: true });
  }
  const lines = out.split("\n");
  assert.equal(lines[0], "-- connected to demo (session demo, head 0)");
  assert.equal(lines[15], "#15 turn/end          completed");
  // While the server was down: reconnect attempts, each from seq 16; then a connection that replays nothing
  // the client already has.
  const between = lines.slice(16, -2);
  assert.ok(between.length >= 1, out);
  for (const line of between) {
    assert.match(
      line,
      new RegExp(
        `^(-- connection lost; reconnecting in \\d+ ms from seq 16|-- cannot connect to ws://127\\.0\\.0\\.1:${port}/v1/agents/demo/stream)$`,
      ),
    );
  }
  assert.deepStrictEqual(lines.slice(-2), ["-- connected to demo (session demo, head 15)", ""]);
});

/** The demo session's `session/created` payload as the orchestrator prints it (cut at 160 characters). */
function createdMeta(): string {
  const text = JSON.stringify({
    meta: {
      agent_id: "demo",
      environment: {
        cwd: "/tmp/terret-demo",
        workdirs: ["/tmp/terret-demo"],
        platform: Deno.build.os,
        sandbox: "docker",
        isolated: true,
        approvals: false,
      },
    },
  });
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}
