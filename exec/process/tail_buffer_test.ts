/** `TailBuffer`: the last `limit` bytes of a terminal's output between reads, in whole characters. */
import assert from "node:assert/strict";
import { seededRandom } from "@terret/core/testing";
import { TailBuffer, utf8Length } from "./_capture.ts";

/** The reference: every character kept in order, the oldest dropped one at a time while over the limit. */
class PlainTail {
  #chars: string[] = [];
  #bytes = 0;
  #dropped = 0;
  constructor(readonly limit: number) {}
  push(text: string): void {
    for (const char of text) {
      this.#chars.push(char);
      this.#bytes += new TextEncoder().encode(char).length;
    }
    while (this.#bytes > this.limit) {
      const size = new TextEncoder().encode(this.#chars.shift()!).length;
      this.#bytes -= size;
      this.#dropped += size;
    }
  }
  take(): { text: string; dropped: number } {
    const body = this.#chars.join("");
    const dropped = this.#dropped;
    this.#chars = [];
    this.#bytes = 0;
    this.#dropped = 0;
    return { text: dropped > 0 ? `[… ${dropped} bytes dropped …]\n${body}` : body, dropped };
  }
}

Deno.test("TailBuffer keeps what a character-by-character tail keeps, over random pushes of 1- to 4-byte characters", () => {
  const next = seededRandom(3);
  const alphabet = ["a", "z", "\n", "é", "€", "😀"];
  let takes = 0;
  for (let round = 0; round < 200; round++) {
    const limit = 1 + Math.floor(next() * 300);
    const buffer = new TailBuffer(limit);
    const plain = new PlainTail(limit);
    for (let push = 0; push < 40; push++) {
      // Mostly small pushes, now and then one larger than the whole limit.
      const length = next() < 0.1 ? limit + Math.floor(next() * 200) : Math.floor(next() * 12);
      const text = Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]!)
        .join("");
      buffer.push(text);
      plain.push(text);
      assert.ok(buffer.size <= limit, `round ${round}: ${buffer.size} > ${limit}`);
      if (next() < 0.15) {
        assert.deepStrictEqual(buffer.take(), plain.take(), `round ${round}, push ${push}`);
        takes++;
      }
    }
    assert.deepStrictEqual(buffer.take(), plain.take(), `round ${round}, at its end`);
  }
  assert.ok(takes > 500);
});

Deno.test("TailBuffer behind one 64 KiB write, a 2-byte character at a time, keeps the newest 64 KiB in whole characters", () => {
  const buffer = new TailBuffer(65_536);
  buffer.push("x".repeat(65_536));
  for (let i = 0; i < 10_000; i++) buffer.push("é");
  const { text, dropped } = buffer.take();
  assert.equal(dropped, 20_000);
  assert.equal(utf8Length(text.slice(text.indexOf("\n") + 1)), 65_536);
  assert.ok(text.endsWith("é".repeat(10_000)));
});
