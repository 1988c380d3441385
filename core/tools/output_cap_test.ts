import assert from "node:assert/strict";
import { byteLength, capContent, truncationMarker } from "./output_cap.ts";

const bytes = (text: string): number => new TextEncoder().encode(text).length;

Deno.test("capContent() returns content that fits unchanged (the same value)", () => {
  const text = "x".repeat(1024);
  assert.equal(capContent(text, 1024), text);
  const parts = [{ type: "text" as const, text: "a" }, { type: "image" as const, data: "AAAA" }];
  assert.equal(capContent(parts, 1024), parts);
});

Deno.test("capContent() cuts text to the cap, marker included, and says how much was kept", () => {
  const capped = capContent("y".repeat(5000), 1024) as string;
  const kept = 1024 - bytes(truncationMarker(1024, 5000));
  assert.equal(kept, 930);
  assert.equal(
    capped,
    "y".repeat(930) +
      "\n\n[output truncated: showing the first 930 of 5000 bytes; narrow the request to see the rest]",
  );
  assert.equal(bytes(capped), 1023);
});

Deno.test("capContent() never splits a multi-byte character", () => {
  const text = "é".repeat(3000); // 2 bytes each
  const capped = capContent(text, 1025) as string;
  assert.ok(bytes(capped) <= 1025);
  const kept = capped.slice(0, capped.indexOf("\n\n[output truncated"));
  assert.equal(kept, "é".repeat(kept.length));
  assert.equal(bytes(kept) % 2, 0);
  assert.equal(capped.includes("\uFFFD"), false);
});

Deno.test("capContent() shares the budget across parts: cuts the crossing text part and counts the dropped ones", () => {
  const parts = [
    { type: "text" as const, text: "a".repeat(400) },
    { type: "text" as const, text: "b".repeat(2000) },
    { type: "image" as const, data: "C".repeat(100), media_type: "image/png" },
    { type: "text" as const, text: "d" },
  ];
  const capped = capContent(parts, 1024) as { type: string; text: string }[];
  assert.deepStrictEqual(capped.map((part) => part.type), ["text", "text", "text"]);
  assert.equal(capped[0], parts[0]);
  assert.match(capped[1]!.text, /^b+\n\n\[output truncated: showing the first \d+ of 2000 bytes;/);
  assert.equal(
    capped[2]!.text,
    "[output truncated: 2510 bytes exceed the 1024-byte cap; 2 later part(s) omitted]",
  );
  const total = capped.reduce((sum, part) => sum + bytes(part.text), 0);
  assert.ok(total <= 1024, `total ${total}`);
});

Deno.test("capContent() replaces an image that does not fit with a note", () => {
  const parts = [
    { type: "text" as const, text: "caption" },
    { type: "image" as const, data: "Z".repeat(4000), media_type: "image/png" },
  ];
  assert.deepStrictEqual(capContent(parts, 1024), [
    { type: "text", text: "caption" },
    { type: "text", text: "[image omitted: 4009 bytes do not fit the output cap]" },
  ]);
});

Deno.test("capContent() refuses a cap below the minimum", () => {
  assert.throws(
    () => capContent("x", 100),
    (error: unknown) =>
      error instanceof RangeError &&
      error.message ===
        "Cannot cap tool output at 100 bytes: the cap must be an integer of at least 1024",
  );
});

Deno.test("byteLength() counts UTF-8 bytes", () => {
  assert.deepStrictEqual(
    ["", "abc", "é", "😀", "a".repeat(2000)].map(byteLength),
    [0, 3, 2, 4, 2000],
  );
});
