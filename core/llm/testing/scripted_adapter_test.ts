import assert from "node:assert/strict";
import type { StreamEvent } from "@terret/core";
import { errorReply, scriptedAdapter, textReply, toolCallsReply } from "@terret/core/testing";

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

Deno.test("scriptedAdapter() answers requests with their scripts in order and records them", async () => {
  const adapter = scriptedAdapter([textReply(["a", "b"], { usage: null })]);
  adapter.script((request, index) => textReply(`${index}:${request.messages.length}`));
  assert.deepStrictEqual(await collect(adapter.stream({ messages: [] })), [
    { type: "message_start" },
    { type: "text_delta", text: "a" },
    { type: "text_delta", text: "b" },
    { type: "message_stop", finishReason: "stop" },
  ]);
  const second = await collect(adapter.stream({ messages: [{ role: "user", parts: [] }] }));
  assert.deepStrictEqual(second[1], { type: "text_delta", text: "1:1" });
  assert.deepStrictEqual(await collect(adapter.stream({ messages: [] })), [{
    type: "error",
    error: {
      kind: "http",
      status: 400,
      message: "scriptedAdapter: no response scripted for request 3",
      retryable: false,
    },
  }]);
  assert.equal(adapter.requests.length, 3);
  assert.equal(adapter.remaining, 0);
});

Deno.test("toolCallsReply() reports arguments that are not a JSON object as argsError", () => {
  const items = toolCallsReply([
    { id: "c1", name: "t", args: { a: 1 } },
    { id: "c2", name: "t", args: "[1]" },
  ]);
  assert.deepStrictEqual(items.filter((item) => item.type === "tool_call_end"), [
    { type: "tool_call_end", index: 0, id: "c1", name: "t", args: { a: 1 } },
    {
      type: "tool_call_end",
      index: 1,
      id: "c2",
      name: "t",
      args: undefined,
      argsError: { message: "The arguments are not a JSON object", raw: "[1]" },
    },
  ]);
  assert.deepStrictEqual(items.at(-1), { type: "message_stop", finishReason: "tool_calls" });
});

Deno.test("scriptedAdapter() holds a stream at a gate and ends it as aborted when the signal aborts", async () => {
  const adapter = scriptedAdapter([
    [{ type: "message_start" }, { type: "gate", gate: "g" }, ...textReply("late").slice(1)],
    errorReply({ kind: "provider", message: "boom", retryable: false }),
  ]);
  const controller = new AbortController();
  const events = collect(adapter.stream({ messages: [] }, { signal: controller.signal }));
  await adapter.reached("g");
  controller.abort();
  assert.deepStrictEqual(await events, [
    { type: "message_start" },
    {
      type: "error",
      error: { kind: "aborted", message: "The request was aborted", retryable: false },
    },
  ]);
  assert.deepStrictEqual((await collect(adapter.stream({ messages: [] }))).at(-1), {
    type: "error",
    error: { kind: "provider", message: "boom", retryable: false },
  });
  await adapter.waitForRequests(2);
});
