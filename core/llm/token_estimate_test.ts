import assert from "node:assert/strict";
import { estimateTokens } from "./token_estimate.ts";

Deno.test("estimateTokens() charges a quarter token per character plus message, tool and image overheads", () => {
  assert.equal(estimateTokens({ messages: [] }), 0);
  assert.equal(
    estimateTokens({
      messages: [{ role: "user", parts: [{ type: "text", text: "hello world!" }] }],
    }),
    4 + 3,
  );
  const request = {
    system: "x".repeat(40),
    tools: [{ name: "Read", description: "Reads", parameters: { type: "object" } }],
    messages: [
      {
        role: "user" as const,
        parts: [{ type: "text" as const, text: "y".repeat(8) }, {
          type: "image" as const,
          url: "https://a/b.png",
        }],
      },
      {
        role: "assistant" as const,
        parts: [{ type: "tool_call" as const, id: "c", name: "Read", args: { file_path: "/a" } }],
      },
      {
        role: "tool" as const,
        parts: [{
          type: "tool_result" as const,
          id: "c",
          name: "Read",
          content: [{ type: "text" as const, text: "z".repeat(12) }, {
            type: "image" as const,
            data: "AA==",
          }],
          is_error: false,
        }],
      },
    ],
  };
  // chars: 40 system + (4 + 5 + 17) tool + 8 text + (4 + 17) call + 12 result = 107 -> 27 tokens;
  // fixed: 4 system + 3 × 4 messages + 2 × 1,200 images = 2,416
  assert.equal(estimateTokens(request), 2_416 + 27);
});
