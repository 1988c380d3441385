import assert from "node:assert/strict";
import { type Context, createContext, Loader, pluginPermissions, TerretError } from "@terret/hames";
import {
  CASSETTES,
  fakeOpenRouter,
  jsonError,
  sseResponse,
  textTurn,
  TRANSCRIPTS,
} from "../../testing.ts";
import { Llm, LlmRegistry } from "../llm_registry.ts";
import { openRouterLlm } from "../openrouter/plugin.ts";
import type { LlmRequest, ModelRole, StreamEvent } from "../vocabulary.ts";
import { readCassette } from "./cassette.ts";
import { llmRecorder } from "./recorder.ts";
import { CassettePlayer, llmReplayer, replayTransport } from "./replayer.ts";

/** No request ever reaches this address: replay must not touch the network. */
const NOWHERE = "http://127.0.0.1:9/api/v1";

function ask(text: string): LlmRequest {
  return { messages: [{ role: "user", parts: [{ type: "text", text }] }] };
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function replaying(path: string, match: "key" | "sequence" = "key"): Promise<Context> {
  const ctx = createContext({ mode: "test" });
  await new Loader(ctx).load([
    { id: "llm", plugin: LlmRegistry },
    {
      id: "llm.main",
      plugin: openRouterLlm,
      config: { model: "m", api_key: "unused", base_url: NOWHERE },
    },
    { id: "llm.replayer", plugin: llmReplayer, config: { path, match } },
  ]);
  return ctx;
}

Deno.test("a recorded session replays byte for byte to the same events, without a network", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-replay-" });
  try {
    const path = `${dir}/session.jsonl`;
    const requests: [ModelRole, LlmRequest][] = [
      ["main", ask("plain")],
      ["main", ask("tools")],
      ["titler", ask("retry")],
      ["main", ask("mid-stream error")],
      ["main", ask("dropped")],
      ["main", ask("plain")],
    ];
    await using server = await fakeOpenRouter();
    server.script(
      sseResponse(TRANSCRIPTS.plainText, { chunks: 37, delayMs: 1 }),
      sseResponse(TRANSCRIPTS.parallelTools, { chunks: [5, 300, 2, 900] }),
      jsonError(503, "Busy", { headers: { "retry-after": "0" } }),
      sseResponse(TRANSCRIPTS.reasoning, { chunks: 100, delayMs: 1 }),
      sseResponse(TRANSCRIPTS.midStreamError),
      sseResponse(TRANSCRIPTS.plainText.slice(0, 350), { end: "drop" }),
      sseResponse(textTurn("second answer to the same question")),
    );
    const recording = createContext({ mode: "test" });
    await new Loader(recording).load([
      { id: "llm", plugin: LlmRegistry },
      {
        id: "llm.main",
        plugin: openRouterLlm,
        config: { model: "m", api_key: "sk-live", base_url: server.url, max_retries: 1 },
      },
      { id: "llm.recorder", plugin: llmRecorder, config: { path } },
    ]);
    const recorded: StreamEvent[][] = [];
    for (const [role, request] of requests) {
      recorded.push(await collect(recording.get(Llm).stream(request, { role })));
    }
    await recording.dispose();
    assert.deepStrictEqual(recorded.map((events) => events.at(-1)!.type), [
      "message_stop",
      "message_stop",
      "message_stop",
      "error",
      "error",
      "message_stop",
    ]);

    await using ctx = await replaying(path);
    for (const [i, [role, request]] of requests.entries()) {
      assert.deepStrictEqual(
        await collect(ctx.get(Llm).stream(request, { role })),
        recorded[i],
        `request ${i}`,
      );
    }
    const cassette = await readCassette(path);
    assert.deepStrictEqual(
      cassette.interactions.map((interaction) => interaction.events),
      recorded,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shipped cassettes replay through the real adapter to their recorded events", async () => {
  for (const url of [CASSETTES.plainText, CASSETTES.toolTurn]) {
    const cassette = await readCassette(url);
    await using ctx = await replaying(url.href);
    for (const interaction of cassette.interactions) {
      const events = await collect(
        ctx.get(Llm).stream(interaction.request, { role: interaction.role }),
      );
      assert.deepStrictEqual(events, interaction.events);
    }
  }
});

Deno.test("the tool-turn cassette is a two-step Read turn: a call, then an answer from its result", async () => {
  const cassette = await readCassette(CASSETTES.toolTurn);
  const [step1, step2] = cassette.interactions;
  assert.deepStrictEqual(step1!.events.filter((event) => event.type === "tool_call_end"), [{
    type: "tool_call_end",
    index: 0,
    id: "toolu_01A09q90qw90lq917835lq9",
    name: "Read",
    args: { file_path: "/workspace/README.md" },
  }]);
  assert.deepStrictEqual(step1!.request.tools!.map((tool) => tool.name), ["Read", "Bash"]);
  assert.deepStrictEqual(step2!.request.messages.map((message) => message.role), [
    "user",
    "assistant",
    "tool",
  ]);
  assert.deepStrictEqual(step2!.request.messages[2]!.parts[0]!.type, "tool_result");
  const text = step2!.events.flatMap((event) => event.type === "text_delta" ? [event.text] : [])
    .join("");
  assert.equal(text, "To install, run `npx -y deno@2.9.6 task serve` — the README's only step.");
  assert.deepStrictEqual(step2!.events.at(-1), {
    type: "message_stop",
    finishReason: "stop",
    rawFinishReason: "end_turn",
  });
});

Deno.test("a request the cassette does not hold fails at once, naming the first difference", async () => {
  await using ctx = await replaying(CASSETTES.toolTurn.href);
  const cassette = await readCassette(CASSETTES.toolTurn);
  const recorded = cassette.interactions[0]!.request;
  const changed = {
    ...recorded,
    messages: [{
      role: "user" as const,
      parts: [{ type: "text" as const, text: "How do I uninstall it?" }],
    }],
  };
  assert.throws(
    () => ctx.get(Llm).stream(changed),
    (error: unknown) =>
      error instanceof TerretError && error.code === "CassetteMismatch" &&
      error.message.startsWith(
        'Cannot replay a model request: no interaction in cassette "tool_turn.jsonl" matches key ',
      ) &&
      error.message.endsWith(
        '… (role "main", 1 messages); the next recorded request differs at request.messages[0].parts[0].text: ' +
          'recorded "How do I install this project? Check the README.", got "How do I uninstall it?"',
      ),
  );
});

Deno.test("sequence matching plays interactions in order whatever the request, starting over", async () => {
  await using ctx = await replaying(CASSETTES.toolTurn.href, "sequence");
  const cassette = await readCassette(CASSETTES.toolTurn);
  const ends: string[] = [];
  for (let i = 0; i < 3; i++) {
    const events = await collect(ctx.get(Llm).stream(ask(`anything ${i}`)));
    const stop = events.at(-1)!;
    ends.push(stop.type === "message_stop" ? stop.finishReason : stop.type);
  }
  assert.deepStrictEqual(ends, ["tool_calls", "stop", "tool_calls"]);
  assert.equal(new CassettePlayer(cassette, { match: "sequence" }).played, 0);
});

Deno.test("replayTransport() serves the recorded read boundaries and refuses an extra attempt", async () => {
  const cassette = await readCassette(CASSETTES.plainText);
  const interaction = cassette.interactions[0]!;
  const transport = replayTransport(interaction, "plain_text.jsonl");
  const response = await transport(
    new Request("http://replay.invalid/chat/completions", { method: "POST" }),
  );
  const sizes: number[] = [];
  const reader = response.body!.getReader();
  for (let i = 0; i < interaction.exchanges[0]!.reads!.length; i++) {
    const { value } = await reader.read();
    sizes.push(value!.byteLength);
  }
  await reader.cancel();
  assert.deepStrictEqual(sizes, interaction.exchanges[0]!.reads);
  const extra = await transport(
    new Request("http://replay.invalid/chat/completions", { method: "POST" }),
  );
  assert.equal(extra.status, 400);
  assert.deepStrictEqual(await extra.json(), {
    error: {
      code: 400,
      message:
        'Cannot replay a model request from cassette "plain_text.jsonl": it recorded 1 HTTP attempts and the adapter made another',
    },
  });
});

Deno.test("the record and replay rows ask for the cassette file only", () => {
  assert.deepStrictEqual(
    pluginPermissions(llmRecorder, { path: "/tmp/s.jsonl", overwrite: true }),
    {
      read: ["/tmp/s.jsonl"],
      write: ["/tmp/s.jsonl"],
    },
  );
  assert.deepStrictEqual(
    pluginPermissions(llmReplayer, { path: "cassettes/s.jsonl", match: "key" }),
    {
      read: ["cassettes/s.jsonl"],
    },
  );
  assert.deepStrictEqual(
    pluginPermissions(llmReplayer, { path: "file:///srv/c/s.jsonl", match: "key" }),
    {
      read: ["/srv/c/s.jsonl"],
    },
  );
  assert.deepStrictEqual(
    pluginPermissions(llmReplayer, {
      path: "https://jsr.io/@terret/core/llm/testdata/tool_turn.jsonl",
      match: "sequence",
    }),
    { net: ["jsr.io"] },
  );
});
