import assert from "node:assert/strict";
import { toToolOutcome } from "./content.ts";

const LABEL = `"t" of MCP server "s"`;

Deno.test("toToolOutcome() joins text blocks into one string", () => {
  assert.deepStrictEqual(
    toToolOutcome({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, LABEL),
    { content: "a\nb", is_error: false },
  );
  assert.deepStrictEqual(toToolOutcome({ content: [] }, LABEL), { content: "", is_error: false });
});

Deno.test("toToolOutcome() keeps an isError result's text for the model", () => {
  assert.deepStrictEqual(
    toToolOutcome({ content: [{ type: "text", text: "no such city" }], isError: true }, LABEL),
    { content: "no such city", is_error: true },
  );
});

Deno.test("toToolOutcome() maps images, audio, links and embedded resources", () => {
  const outcome = toToolOutcome({
    content: [
      { type: "text", text: "look:" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "AAAAAAAA", mimeType: "audio/wav" },
      {
        type: "resource_link",
        uri: "file:///a.txt",
        name: "a.txt",
        mimeType: "text/plain",
        description: "The A file",
      },
      { type: "resource_link", uri: "demo://x", name: "x" },
      {
        type: "resource",
        resource: { uri: "file:///b.md", mimeType: "text/markdown", text: "# B" },
      },
      { type: "resource", resource: { uri: "file:///c.png", mimeType: "image/png", blob: "AAAA" } },
      { type: "resource", resource: { uri: "file:///d.bin", blob: "AAAAAA==" } },
      { type: "hologram" },
    ],
  }, LABEL);
  assert.deepStrictEqual(outcome, {
    is_error: false,
    content: [
      { type: "text", text: "look:" },
      { type: "image", data: "iVBORw0KGgo=", media_type: "image/png" },
      {
        type: "text",
        text: "[audio (audio/wav, 6 bytes) omitted: audio is not passed to the model]",
      },
      { type: "text", text: "[resource link] a.txt: file:///a.txt (text/plain; The A file)" },
      { type: "text", text: "[resource link] x: demo://x" },
      { type: "text", text: "[resource file:///b.md (text/markdown)]\n# B" },
      { type: "text", text: "[resource file:///c.png (image/png)]" },
      { type: "image", data: "AAAA", media_type: "image/png" },
      { type: "text", text: "[resource file:///d.bin: 4 bytes of binary data omitted]" },
      { type: "text", text: '[content of type "hologram" omitted: not supported]' },
    ],
  });
});

Deno.test("toToolOutcome() serialises structured content when no text block carries it", () => {
  assert.deepStrictEqual(
    toToolOutcome({ content: [], structuredContent: { t: 21.5 } }, LABEL, {
      hasOutputSchema: true,
      validate: () => undefined,
    }),
    { content: '{"t":21.5}', is_error: false },
  );
  assert.deepStrictEqual(
    toToolOutcome({
      content: [{ type: "text", text: '{"t": 21.5}' }],
      structuredContent: { t: 21.5 },
    }, LABEL),
    { content: '{"t": 21.5}', is_error: false },
  );
});

Deno.test("toToolOutcome() holds structured content to the tool's output schema", () => {
  const check = {
    hasOutputSchema: true,
    validate: (value: unknown) =>
      typeof (value as { t?: unknown }).t === "number" ? undefined : "data/t must be number",
  };
  assert.deepStrictEqual(
    toToolOutcome({ content: [], structuredContent: { t: "warm" } }, LABEL, check),
    {
      content:
        `Tool "t" of MCP server "s" returned structured content that does not match its output schema: data/t must be number`,
      is_error: true,
    },
  );
  assert.deepStrictEqual(toToolOutcome({ content: [{ type: "text", text: "x" }] }, LABEL, check), {
    content:
      `Tool "t" of MCP server "s" returned no structured content although it declares an output schema`,
    is_error: true,
  });
  // A failed call need not carry structured content.
  assert.deepStrictEqual(
    toToolOutcome({ content: [{ type: "text", text: "down" }], isError: true }, LABEL, check),
    { content: "down", is_error: true },
  );
});
