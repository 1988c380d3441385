/**
 * `promptCapabilities.image` says what the model takes: false by default, and an image block is then refused; true
 * when the server is told the model takes images, and the image reaches the log as an image part.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";
import { connectPair, initialize, newSession } from "./acp_client.ts";

const ROOT = "/work/project";
const PROMPT: acp.ContentBlock[] = [
  { type: "text", text: "look" },
  { type: "image", data: "aGk=", mimeType: "image/png" },
];

Deno.test("without a vision model, image is not advertised and an image prompt is refused, appending nothing", async () => {
  await using stack = await createAgentStack();
  const { connection, agent } = connectPair({ ...stack, roots: [ROOT] });
  try {
    const init = await initialize(agent);
    assert.equal(init.agentCapabilities?.promptCapabilities?.image, false);
    const sessionId = await newSession(agent, ROOT);
    const refused = await agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: PROMPT,
    }).then(() => undefined, (error: acp.RequestError) => error);
    assert.deepStrictEqual(
      { code: refused?.code, message: refused?.message, data: refused?.data },
      {
        code: -32602,
        message:
          "Cannot take the prompt: the model does not take images (promptCapabilities.image " +
          "is false)",
        data: { field: "prompt", type: "image" },
      },
    );
    const types = (await stack.sessions.read(sessionId)).map((event) => event.type);
    assert.deepStrictEqual(types, ["session/created"]);
  } finally {
    connection.close();
  }
});

Deno.test("with a vision model, image is advertised and an image prompt reaches the log", async () => {
  await using stack = await createAgentStack({ adapter: scriptedAdapter([textReply("a cat")]) });
  const { connection, agent } = connectPair({ ...stack, roots: [ROOT], images: () => true });
  try {
    const init = await initialize(agent);
    assert.equal(init.agentCapabilities?.promptCapabilities?.image, true);
    const sessionId = await newSession(agent, ROOT);
    assert.deepStrictEqual(
      await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: PROMPT }),
      { stopReason: "end_turn" },
    );
    const user = (await stack.sessions.read(sessionId)).find((event) =>
      event.type === "user/message"
    );
    assert.deepStrictEqual(user?.payload, {
      content: [
        { type: "text", text: "look" },
        { type: "image", data: "aGk=", media_type: "image/png" },
      ],
    });
  } finally {
    connection.close();
  }
});
