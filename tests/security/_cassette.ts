/**
 * Scripted cassettes for security tests: each interaction is an OpenRouter stream (text, or one tool call) served
 * byte for byte through the real adapter by the replayer row, in file order.
 *
 * @module
 */

/** One scripted model answer: text, or one tool call. */
export type ScriptedAnswer =
  | { readonly text: string }
  | { readonly tool: string; readonly args: Record<string, unknown> };

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${
    JSON.stringify({
      id: "gen-scripted",
      model: "scripted/model",
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  }\n\n`;
}

function body(answer: ScriptedAnswer): string {
  if ("text" in answer) {
    return chunk({ role: "assistant", content: answer.text }) + chunk({}, "stop") +
      "data: [DONE]\n\n";
  }
  return chunk({
    role: "assistant",
    content: null,
    tool_calls: [{
      index: 0,
      id: "call_1",
      type: "function",
      function: { name: answer.tool, arguments: JSON.stringify(answer.args) },
    }],
  }) + chunk({}, "tool_calls") + "data: [DONE]\n\n";
}

/** The JSONL text of a cassette answering requests with `answers`, in order (replayer `match: sequence`). */
export function scriptedCassette(answers: readonly ScriptedAnswer[]): string {
  const lines = [
    { cassette: "terret-llm", version: 1, created_at: "2026-01-01T00:00:00.000Z" },
    ...answers.map((answer) => ({
      key: "0".repeat(64),
      role: "main",
      request: { messages: [] },
      exchanges: [{
        method: "POST",
        url: "http://127.0.0.1:1/api/v1/chat/completions",
        request_body: {},
        status: 200,
        headers: { "content-type": "text/event-stream" },
        end: "complete",
        body: body(answer),
      }],
      events: [],
    })),
  ];
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}
