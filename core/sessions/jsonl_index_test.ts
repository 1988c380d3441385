import assert from "node:assert/strict";
import { createMemoryLogger, type MemoryLogger } from "@terret/hames";
import type { EventDraft, SessionEvent } from "./envelope.ts";
import { JsonlSessionStore } from "./jsonl_store.ts";
import { BYTES_PER_MARK, LineIndex, LINES_PER_MARK } from "./_jsonl_index.ts";

const TYPES = ["assistant/chunk", "tool/result", "input/queued"] as const;

/** Draft `i` of session `id`: types cycle so that `input/queued` is one event in 7. */
function draft(id: string, i: number): EventDraft {
  const type = i === 1 ? "session/created" : i % 7 === 0 ? TYPES[2] : TYPES[i % 2]!;
  const payload = { n: i, text: "é🚀".repeat(i % 5) + "x".repeat(i % 97) };
  return {
    id: `e${i}`,
    session_id: id,
    at: "2026-01-01T00:00:00.000Z",
    type,
    payload,
    parent_id: null,
    payload_json: JSON.stringify(payload),
    expect: i === 1 ? "new" : "existing",
  };
}

async function appendEvents(store: JsonlSessionStore, id: string, from: number, to: number) {
  const pending: Promise<SessionEvent>[] = [];
  for (let i = from; i <= to; i++) pending.push(store.append(draft(id, i)));
  await Promise.all(pending);
}

/** The session as a plain reading of its whole file gives it: the reference every indexed read must match. */
async function reference(dir: string, id: string): Promise<SessionEvent[]> {
  const text = await Deno.readTextFile(`${dir}/${id}.jsonl`);
  return text.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line));
}

/** Counts the bytes read from files (through `Deno.readFile` or any `Deno.FsFile` read) while `body` runs. */
async function bytesRead(body: () => Promise<unknown>): Promise<number> {
  const proto = Deno.FsFile.prototype;
  const { read, readSync } = proto;
  const readFile = Deno.readFile;
  let total = 0;
  proto.read = async function (this: Deno.FsFile, buffer: Uint8Array): Promise<number | null> {
    const n = await read.call(this, buffer);
    total += n ?? 0;
    return n;
  };
  proto.readSync = function (this: Deno.FsFile, buffer: Uint8Array): number | null {
    const n = readSync.call(this, buffer);
    total += n ?? 0;
    return n;
  };
  Deno.readFile = async (
    ...args: Parameters<typeof Deno.readFile>
  ): Promise<Uint8Array<ArrayBuffer>> => {
    const bytes = await readFile(...args);
    total += bytes.length;
    return bytes;
  };
  try {
    await body();
  } finally {
    Object.assign(proto, { read, readSync });
    Deno.readFile = readFile;
  }
  return total;
}

/** Runs `body` on a store over a fresh directory, then closes the store and removes the directory. */
async function withStore(
  prefix: string,
  body: (store: JsonlSessionStore, dir: string, logger: MemoryLogger) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: `terret-jsonl-${prefix}-` });
  const logger = createMemoryLogger();
  const store = JsonlSessionStore.open({ dir, logger });
  try {
    await body(store, dir, logger);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const errorsOf = (logger: MemoryLogger) => logger.records.filter((r) => r.level === "error");

Deno.test("LineIndex marks every 256th line and windows whole marks from the one at or before a seq", () => {
  const index = new LineIndex();
  const line = (n: number) => `${"x".repeat(n % 10)}\n`;
  const text = Array.from({ length: 1000 }, (_, i) => line(i + 1)).join("");
  const bytes = new TextEncoder().encode(`${text}torn`);
  // Added in uneven pieces, as commits and catch-ups do: a piece ends mid-line and the rest comes with the next.
  let at = 0;
  for (const size of [5, 700, 1, 3000, bytes.length]) {
    at += index.add(bytes.subarray(at, Math.min(bytes.length, at + size)));
  }
  assert.deepStrictEqual([index.lines, index.end], [1000, text.length]);
  const offsetOf = (seq: number) =>
    text.split("\n").slice(0, seq - 1).join("\n").length + (seq > 1 ? 1 : 0);
  assert.deepStrictEqual(index.window(1, 1, 1 << 20), {
    start: 0,
    end: offsetOf(257),
    first: 1,
    count: 256,
  });
  assert.deepStrictEqual(index.window(300, 300, 1 << 20), {
    start: offsetOf(257),
    end: offsetOf(769),
    first: 257,
    count: 512,
  });
  // A byte bound stops it after the first mark; past the last mark it runs to the end of the complete lines.
  assert.deepStrictEqual(index.window(300, 300, 1), {
    start: offsetOf(257),
    end: offsetOf(513),
    first: 257,
    count: 256,
  });
  assert.deepStrictEqual(index.window(800, 10_000, 1 << 20), {
    start: offsetOf(769),
    end: text.length,
    first: 769,
    count: 232,
  });
  assert.equal(index.window(1001, 1, 1 << 20), undefined);
  assert.equal(LINES_PER_MARK, 256);
});

Deno.test("LineIndex also marks a line once 256 KiB have gone by since the last mark, so large lines keep windows small", () => {
  const index = new LineIndex();
  const line = `${"x".repeat(100 * 1024 - 1)}\n`; // 100 KiB a line: a mark every third line
  const bytes = new TextEncoder().encode(line.repeat(30));
  index.add(bytes);
  assert.equal(BYTES_PER_MARK, 256 * 1024);
  const at = (seq: number) => (seq - 1) * line.length;
  // Marks at lines 1, 4, 7, …: a one-line page from line 14 starts at line 13 and ends at the next mark.
  assert.deepStrictEqual(index.window(14, 1, 1 << 20), {
    start: at(13),
    end: at(16),
    first: 13,
    count: 3,
  });
  // Ten lines from line 14 span whole marks up to the byte bound (1 MiB: four marks of 300 KiB).
  assert.deepStrictEqual(index.window(14, 10, 1 << 20), {
    start: at(13),
    end: at(25),
    first: 13,
    count: 12,
  });
  assert.deepStrictEqual(index.window(29, 10, 1 << 20), {
    start: at(28),
    end: bytes.length,
    first: 28,
    count: 3,
  });
});

Deno.test("jsonl store: reads through the line index match a plain reading of the file, across marks, bounds and types", () =>
  withStore("index", async (store, dir) => {
    await appendEvents(store, "s", 1, 700);
    const probes: [number, number, number][] = [[1, 10, 5], [256, 258, 3], [257, 700, 1000], [
      500,
      1_000,
      100,
    ], [699, 700, 10]];
    for (let round = 0; round < 2; round++) {
      // Round 2 runs after 600 more events were committed on top of the indexed file.
      const all = await reference(dir, "s");
      for (const [from, to, limit] of probes) {
        const expected = all.filter((e) => e.seq >= from && e.seq <= to).slice(0, limit);
        assert.deepStrictEqual(
          await store.read("s", { from_seq: from, to_seq: to, limit }),
          expected,
        );
        const typed = all.filter((e) => e.seq >= from && e.type === "input/queued").slice(0, limit);
        assert.deepStrictEqual(
          await store.read("s", { from_seq: from, limit, types: ["input/queued"] }),
          typed,
        );
        const json = await store.readJson("s", { from_seq: from, limit });
        assert.deepStrictEqual(
          json.map((item) => JSON.parse(item.json)),
          all.filter((e) => e.seq >= from).slice(0, limit),
        );
      }
      assert.deepStrictEqual(await store.read("s"), all);
      await appendEvents(store, "s", 701, 1300);
    }
  }));

Deno.test("jsonl store: a page read from the end of a long session reads its own lines, not the file", () =>
  withStore("page", async (store, dir) => {
    await appendEvents(store, "s", 1, 20_000);
    const size = (await Deno.stat(`${dir}/s.jsonl`)).size;
    await store.readJson("s", { from_seq: 1, limit: 1 }); // builds the index: one read of the file
    let page: SessionEvent[] = [];
    const read = await bytesRead(async () => {
      page = await store.read("s", { from_seq: 19_001, limit: 1000 });
    });
    assert.deepStrictEqual([page[0]?.seq, page.length], [19_001, 1000]);
    // The page's own lines are about a twentieth of the file; the window around them adds at most one mark's lines.
    assert.ok(
      read < size / 10,
      `read ${read} bytes of a ${size}-byte file for 1,000 of 20,000 events`,
    );
  }));

Deno.test("jsonl store: a page of one large event reads about its own mark, not the session", () =>
  withStore("large", async (store, dir) => {
    const text = "y".repeat(200 * 1024);
    for (let i = 1; i <= 40; i++) {
      const payload = { kind: "text", text };
      await store.append({
        ...draft("s", i),
        type: "assistant/chunk",
        payload,
        payload_json: JSON.stringify(payload),
      });
    }
    const size = (await Deno.stat(`${dir}/s.jsonl`)).size;
    await store.read("s", { limit: 1 }); // builds the index
    let page: SessionEvent[] = [];
    const read = await bytesRead(async () => {
      page = await store.read("s", { from_seq: 25, limit: 1 });
    });
    assert.deepStrictEqual(page.map((e) => e.seq), [25]);
    // Marks every second line here (200 KiB lines): the window is at most two lines, against a 40-line file.
    assert.ok(read <= 3 * 205 * 1024, `read ${read} bytes of a ${size}-byte file for one event`);
  }));

Deno.test("jsonl store: reads stay true when a live file is edited by hand (the index is rebuilt) or ends in a torn line", () =>
  withStore("edit", async (store, dir, logger) => {
    const file = `${dir}/s.jsonl`;
    await appendEvents(store, "s", 1, 600);
    assert.equal((await store.read("s", { from_seq: 590 })).length, 11); // the index is built
    // A byte more at the start of line 2 moves every mark after it: the file grew, so the cached index is caught up,
    // and the first line read through a moved mark is bad, so the read runs again on an index built afresh.
    const lines = (await Deno.readTextFile(file)).split("\n");
    lines[1] = ` ${lines[1]}`;
    await Deno.writeTextFile(file, lines.join("\n"));
    assert.deepStrictEqual(await store.read("s"), await reference(dir, "s"));
    // The same size, other boundaries: the byte moves from line 2 to line 300, so the marks from 257 to 300 move back.
    lines[1] = lines[1].trimStart();
    lines[299] = ` ${lines[299]}`;
    await Deno.writeTextFile(file, lines.join("\n"));
    const expected = await reference(dir, "s");
    assert.deepStrictEqual(
      await store.read("s", { from_seq: 280, limit: 30 }),
      expected.slice(279, 309),
    );
    assert.deepStrictEqual(
      (await store.readJson("s", { from_seq: 598 })).map((item) => JSON.parse(item.json)),
      expected.slice(597),
    );
    assert.deepStrictEqual(errorsOf(logger), []);
    // A crash leaves a torn last line. After a restart a read indexes the complete lines only; the first append cuts
    // the torn bytes, and the index follows the append.
    await store.close();
    await Deno.writeTextFile(file, '{"id":"torn', { append: true });
    const reopened = JsonlSessionStore.open({ dir, logger });
    try {
      assert.deepStrictEqual((await reopened.read("s", { from_seq: 599 })).map((e) => e.seq), [
        599,
        600,
      ]);
      await appendEvents(reopened, "s", 601, 601);
      assert.deepStrictEqual(
        (await reopened.read("s", { from_seq: 599 })).map((e) => e.seq),
        [599, 600, 601],
      );
      assert.deepStrictEqual(await reopened.read("s"), await reference(dir, "s"));
      assert.deepStrictEqual(errorsOf(logger), []);
    } finally {
      await reopened.close();
    }
  }));

Deno.test("jsonl store: a line that is not UTF-8 is StoreCorrupt naming its seq; lines before it still read, a readJson page ends before it", () =>
  withStore("utf8", async (store, dir, logger) => {
    const file = `${dir}/s.jsonl`;
    await appendEvents(store, "s", 1, 300);
    const bytes = await Deno.readFile(file);
    let at = 0;
    for (let line = 1; line < 280; line++) at = bytes.indexOf(10, at) + 1;
    bytes[at + 2] = 0xff; // line 280's third byte, inside `"id"`
    await Deno.writeFile(file, bytes);
    const message =
      `Cannot read seq 280 of session "s" from the jsonl store "${file}": line 280 is not valid UTF-8`;
    await assert.rejects(store.read("s", { from_seq: 270 }), { code: "StoreCorrupt", message });
    assert.deepStrictEqual(
      (await store.read("s", { from_seq: 1, to_seq: 279 })).map((e) => e.seq).at(-1),
      279,
    );
    assert.equal((await store.read("s", { from_seq: 281 })).length, 20);
    assert.deepStrictEqual(
      (await store.readJson("s", { from_seq: 275 })).map((item) => item.seq),
      [275, 276, 277, 278, 279],
    );
    await assert.rejects(store.readJson("s", { from_seq: 280 }), { code: "StoreCorrupt", message });
    assert.deepStrictEqual(
      errorsOf(logger).map((r) => [r.message, r.fields?.seq]),
      [[message, 280], [message, 280]],
    );
  }));

Deno.test("jsonl store: reads racing commits each return a gap-free run from their first seq", () =>
  withStore("race", async (store, dir) => {
    await appendEvents(store, "s", 1, 300);
    // Each read starts while the previous batch's appends are committing, and runs beside the next batch's.
    const reads: {
      from: number;
      limit: number;
      committed: number;
      events: Promise<SessionEvent[]>;
    }[] = [];
    let committed = 300;
    for (let batch = 0; batch < 20; batch++) {
      const from = 1 + batch * 37;
      reads.push({ from, limit: Infinity, committed, events: store.read("s", { from_seq: from }) });
      const writing = appendEvents(store, "s", committed + 1, committed + 50);
      reads.push({
        from,
        limit: 400,
        committed,
        events: store.read("s", { from_seq: from, limit: 400 }),
      });
      await writing;
      committed += 50;
    }
    const all = await reference(dir, "s");
    assert.equal(all.length, 1300);
    for (const [i, read] of reads.entries()) {
      const events = await read.events;
      const least = Math.min(read.limit, read.committed - read.from + 1);
      assert.ok(
        events.length >= least,
        `read ${i} returned ${events.length} events, fewer than ${least}`,
      );
      const seqs = events.map((e) => e.seq);
      assert.deepStrictEqual(
        seqs,
        all.slice(read.from - 1, read.from - 1 + events.length).map((e) => e.seq),
        `read ${i}`,
      );
      assert.deepStrictEqual(
        events,
        all.slice(read.from - 1, read.from - 1 + events.length),
        `read ${i}`,
      );
    }
    assert.deepStrictEqual(await store.read("s"), all);
  }));
