/**
 * Issue 17 items 1 and 2 through a real `trt serve`: every secret the host holds (a literal model key, a key read
 * through `!env` of any variable, the generated socket token, `TERRET_TOKEN`, a configured token) is redacted with
 * the one marker before it reaches a socket frame or the session database, when the model echoes it or a program
 * reads it from the token file or from the server's own `/proc/<pid>/environ`.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "@terret/core";
import { WsClient } from "../ws/_clients.ts";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { scriptedCassette } from "./_cassette.ts";
import { shellWord } from "../shell_words.ts";

const LITERAL_KEY = "LocalKey_literal_0123456789abcdef";
const ENV_KEY = "EnvKey_fromAnyVariable_0123456789";
const ENV_TOKEN = "EnvSocketToken_0123456789abcdefXYZ";
const CONFIG_TOKEN = "ConfiguredToken_0123456789abcdefXYZ";
const T = "-REDACTED-";

const isTurnEnd = (frame: Record<string, unknown>): boolean =>
  frame.type === "event" && (frame.event as SessionEvent).type === "turn/end";

function patch(home: string, cassette: string, tokens: string): string {
  return [
    "rows:",
    "  - id: workspace",
    `    config: { dirs: [${home}/work] }`,
    "  - id: sandbox",
    "    plugin: sandbox-none",
    "    config: { acknowledge_unsandboxed: true }",
    "  - id: tools.allow",
    "    config: { allow: [Bash] }",
    // Nobody answers approvals here, and the cassette scripts the turns only (no title call).
    "  - id: approvals",
    "    config: { allow: [Bash], always_can_be_ruled: true }",
    "  - id: titles",
    "    config: { auto: false }",
    "  - id: llm.main",
    `    config: { model: scripted/model, api_key: ${LITERAL_KEY} }`,
    "  - id: llm.subagent",
    "    plugin: terret-llm-openrouter",
    "    after: llm.main",
    "    config: { role: subagent, model: scripted/model, api_key: !env MY_MODEL_KEY }",
    "  - id: llm.replayer",
    "    plugin: terret-llm-replayer",
    "    after: llm.subagent",
    `    config: { path: ${cassette}, match: sequence }`,
    "  - id: interfaces.ws",
    `    config: { port: 0, ${tokens}token_env: TERRET_TOKEN, token_file: ws/token, dir: !setting terret.home }`,
    "",
  ].join("\n");
}

/** Runs one turn (a Bash call running `command`, then an answer echoing both model keys); returns what it saw. */
async function turn(
  home: string,
  command: string,
  env: Record<string, string>,
  tokens = "",
): Promise<{ frames: string[]; result: string; answer: string }> {
  await Deno.mkdir(`${home}/work`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/cassette.jsonl`,
    scriptedCassette([
      { tool: "Bash", args: { command } },
      { text: `Your keys are ${LITERAL_KEY} and ${ENV_KEY}.` },
    ]),
  );
  await Deno.writeTextFile(`${home}/serve.yml`, patch(home, `${home}/cassette.jsonl`, tokens));
  const served = await serve(home, [`${home}/serve.yml`], {
    env: { MY_MODEL_KEY: ENV_KEY, ...env },
  });
  try {
    const token = env.TERRET_TOKEN ?? (await Deno.readTextFile(`${home}/ws/token`)).trim();
    const client = await WsClient.open(`ws://127.0.0.1:${served.port}/v1/agents/demo/stream`, {
      token,
    });
    client.send({ type: "subscribe", from_seq: 1 });
    client.send({ type: "message", content: "Show me." });
    const frames = await client.readUntil(isTurnEnd, 60_000);
    await client.close();
    const events = frames.filter((frame) => frame.type === "event").map((frame) =>
      frame.event as SessionEvent
    );
    const result = events.find((event) => event.type === "tool/result")!.payload as {
      content: string | { text: string }[];
    };
    const answer = events.findLast((event) => event.type === "assistant/message")!.payload as {
      parts: { type: string; text: string }[];
    };
    return {
      frames: client.texts,
      result: typeof result.content === "string"
        ? result.content
        : result.content.map((part) => part.text).join(""),
      answer: answer.parts.filter((part) => part.type === "text").map((part) => part.text)
        .join(""),
    };
  } finally {
    assert.equal((await served.stop()).code, 0);
  }
}

async function storedBytes(home: string): Promise<string> {
  let text = "";
  for (const name of ["terret.db", "terret.db-wal"]) {
    try {
      text += new TextDecoder("latin1").decode(await Deno.readFile(`${home}/sessions/${name}`));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return text;
}

Deno.test("trt serve redacts a literal model key, an !env model key and the generated socket token read from its file, with one marker", async () => {
  await using tree = await writeTree({});
  const home = tree.dir;
  const seen = await turn(home, `cat ${shellWord(`${home}/ws/token`)}`, {});
  const generated = (await Deno.readTextFile(`${home}/ws/token`)).trim();
  assert.equal(seen.result, T);
  assert.equal(seen.answer, `Your keys are ${T} and ${T}.`);
  const db = await storedBytes(home);
  for (const secret of [LITERAL_KEY, ENV_KEY, generated]) {
    assert.equal(seen.frames.some((frame) => frame.includes(secret)), false, secret);
    assert.equal(db.includes(secret), false, secret);
  }
  assert.equal(db.includes("[REDACTED]"), false);
});

Deno.test("trt serve redacts TERRET_TOKEN and a configured token that a program reads from the server's /proc environ", async () => {
  await using tree = await writeTree({});
  const home = tree.dir;
  const seen = await turn(
    home,
    // The persistent shell's parent is the server itself.
    "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a -e '^TERRET_TOKEN=' -e '^MY_MODEL_KEY=' | sort; " +
      `echo configured ${CONFIG_TOKEN}`,
    { TERRET_TOKEN: ENV_TOKEN },
    `tokens: [{ token: ${CONFIG_TOKEN}, agents: [other] }], `,
  );
  assert.equal(seen.result, `MY_MODEL_KEY=${T}\nTERRET_TOKEN=${T}\nconfigured ${T}`);
  const db = await storedBytes(home);
  for (const secret of [ENV_TOKEN, CONFIG_TOKEN, ENV_KEY, LITERAL_KEY]) {
    assert.equal(seen.frames.some((frame) => frame.includes(secret)), false, secret);
    assert.equal(db.includes(secret), false, secret);
  }
});
