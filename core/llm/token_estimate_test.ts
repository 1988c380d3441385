import assert from "node:assert/strict";
import { estimateTokens, type TokenEstimateCache } from "./token_estimate.ts";

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

Deno.test("estimateTokens() with a cache counts what it would without, and measures a message only while it can change", () => {
  const cache: TokenEstimateCache = new WeakMap();
  const freeze = <T>(value: T): T => {
    if (typeof value === "object" && value !== null) {
      Object.freeze(value);
      for (const child of Object.values(value)) freeze(child);
    }
    return value;
  };
  const user = freeze({
    role: "user" as const,
    parts: [{ type: "text" as const, text: "x".repeat(40) }],
  });
  const tool = freeze({ name: "Read", description: "Reads", parameters: { type: "object" } });
  const parts = [{ type: "text" as const, text: "y".repeat(8) }];
  const shallow = Object.freeze({ role: "assistant" as const, parts });
  const request = { system: "Be brief.", messages: [user, shallow], tools: [tool] };
  const plain = estimateTokens(request);
  assert.deepStrictEqual([estimateTokens(request, cache), estimateTokens(request, cache)], [
    plain,
    plain,
  ]);
  assert.deepStrictEqual([cache.get(user), cache.get(tool), cache.has(shallow)], [
    [40, 4],
    [26, 0],
    false,
  ]);
  parts[0] = { type: "text", text: "y".repeat(400) };
  assert.equal(estimateTokens(request, cache), estimateTokens(request));
  assert.equal(estimateTokens(request, cache), plain + 98);
});
