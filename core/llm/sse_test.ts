import assert from "node:assert/strict";
import { createParser } from "eventsource-parser";
import { SseDecoder } from "./sse.ts";

function decodeAll(bytes: Uint8Array, cuts: readonly number[]): string[] {
  const seen: string[] = [];
  const decoder = new SseDecoder((data) => seen.push(data));
  let from = 0;
  for (const cut of [...cuts, bytes.byteLength]) {
    decoder.push(bytes.subarray(from, cut));
    from = cut;
  }
  decoder.end();
  return seen;
}

/** The reference: TextDecoder in streaming mode feeding eventsource-parser. */
function reference(bytes: Uint8Array, cuts: readonly number[]): string[] {
  const seen: string[] = [];
  const text = new TextDecoder();
  const parser = createParser({ onEvent: (message) => seen.push(message.data) });
  let from = 0;
  for (const cut of [...cuts, bytes.byteLength]) {
    parser.feed(text.decode(bytes.subarray(from, cut), { stream: true }));
    from = cut;
  }
  parser.feed(text.decode());
  return seen;
}

Deno.test("SseDecoder decodes a stream cut inside every multi-byte character the same as whole", () => {
  const bytes = new TextEncoder().encode('data: {"t":"é — 🙂 ☃ ok"}\n\n: ping\n\ndata: [DONE]\n\n');
  const whole = decodeAll(bytes, []);
  assert.deepStrictEqual(whole, ['{"t":"é — 🙂 ☃ ok"}', "[DONE]"]);
  for (let cut = 1; cut < bytes.byteLength; cut++) {
    assert.deepStrictEqual(decodeAll(bytes, [cut]), whole, `cut at byte ${cut}`);
  }
  const everyByte = Array.from({ length: bytes.byteLength - 1 }, (_, i) => i + 1);
  assert.deepStrictEqual(decodeAll(bytes, everyByte), whole);
});

Deno.test("SseDecoder matches streaming TextDecoder on invalid UTF-8 at any cut", () => {
  const head = new TextEncoder().encode("data: a");
  const tail = new TextEncoder().encode("z\n\ndata: b\n\n");
  const oddities = [
    [0xe2, 0x82], // a truncated 3-byte sequence
    [0xf0, 0x9f, 0x99], // a truncated 4-byte sequence
    [0x80, 0x80], // stray continuation bytes
    [0xc0, 0xaf], // an overlong encoding
    [0xf5, 0x80, 0x80, 0x80], // beyond U+10FFFF
    [0xed, 0xa0, 0x80], // a UTF-16 surrogate
    [0xff],
  ];
  for (const odd of oddities) {
    const bytes = new Uint8Array([...head, ...odd, ...tail]);
    for (let cut = 1; cut < bytes.byteLength; cut++) {
      assert.deepStrictEqual(
        decodeAll(bytes, [cut]),
        reference(bytes, [cut]),
        `bytes ${odd.join(",")} cut at ${cut}`,
      );
    }
  }
});

Deno.test("SseDecoder decodes a character cut at the very end as U+FFFD and drops the open event", () => {
  const bytes = new Uint8Array([...new TextEncoder().encode("data: x\n\ndata: "), 0xf0, 0x9f]);
  assert.deepStrictEqual(decodeAll(bytes, []), ["x"]);
});
