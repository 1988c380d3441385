import assert from "node:assert/strict";
import { seededRandom } from "../testing/seeded_random.ts";
import { createParser } from "eventsource-parser";
import { SseParser } from "./sse_parser.ts";

type Seen = [string | undefined, string][];

function parseAll(pieces: readonly string[]): Seen {
  const seen: Seen = [];
  const parser = new SseParser((data, event) => seen.push([event, data]));
  for (const piece of pieces) parser.feed(piece);
  parser.end();
  return seen;
}

function reference(pieces: readonly string[]): Seen {
  const seen: Seen = [];
  const parser = createParser({ onEvent: (message) => seen.push([message.event, message.data]) });
  for (const piece of pieces) parser.feed(piece);
  return seen;
}

Deno.test("SseParser dispatches data events and skips comments, ids and retries", () => {
  const text = ': OPENROUTER PROCESSING\n\nid: 7\nretry: 10\ndata: {"a":1}\n\n' +
    "event: error\ndata: line one\ndata:line two\n\ndata\n\ndata: [DONE]\n\n";
  assert.deepStrictEqual(parseAll([text]), [
    [undefined, '{"a":1}'],
    ["error", "line one\nline two"],
    [undefined, ""],
    [undefined, "[DONE]"],
  ]);
});

Deno.test("SseParser accepts CR, CRLF and LF line ends, a CRLF split across pieces, and a leading BOM", () => {
  assert.deepStrictEqual(parseAll(["\ufeffdata: a\r", "\n\r\ndata: b\r\rdata: c\n\n"]), [
    [undefined, "a"],
    [undefined, "b"],
    [undefined, "c"],
  ]);
});

Deno.test("SseParser drops an event left unterminated at the end", () => {
  assert.deepStrictEqual(parseAll(["data: done\n\ndata: cut"]), [[undefined, "done"]]);
  assert.deepStrictEqual(parseAll(["data: cut\n"]), []);
});

Deno.test("SseParser matches eventsource-parser on 3,000 random streams split at random places", () => {
  const lines = [
    'data: {"choices":[{"delta":{"content":"é🙂"}}]}',
    "data:no-space",
    "data:  two spaces",
    "data",
    "data:",
    ": OPENROUTER PROCESSING",
    ":",
    "event: error",
    "event:",
    "id: 42",
    "retry: 100",
    "unknown: field",
    "nocolon",
    "data: [DONE]",
    "data: a:b:c",
    "",
    "",
  ];
  const ends = ["\n", "\r\n", "\r"];
  for (let seed = 1; seed <= 3000; seed++) {
    const random = seededRandom(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const bom = random() < 0.1 ? "\ufeff" : "";
    const count = 1 + Math.floor(random() * 12);
    let text = bom;
    for (let i = 0; i < count; i++) text += pick(lines) + (random() < 0.8 ? "\n" : pick(ends));
    if (random() < 0.7) text += "\n";
    const pieces: string[] = [];
    let offset = 0;
    const large = random() < 0.5;
    while (offset < text.length) {
      const size = 1 + Math.floor(random() * (large ? 200 : 9));
      pieces.push(text.slice(offset, offset + size));
      offset += size;
    }
    if (random() < 0.2) pieces.splice(Math.floor(random() * pieces.length), 0, "");
    assert.deepStrictEqual(
      parseAll(pieces),
      reference(pieces),
      `seed ${seed}: ${JSON.stringify(pieces)}`,
    );
  }
});
