/**
 * Crash safety: a child process appending in a loop is killed with SIGKILL; on reopen every persistent store reads
 * a contiguous prefix with no torn event, holding every append the child saw resolve, and appends continue.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { join } from "node:path";
import { createContext } from "@terret/hames";
import { JsonlSessionStore, SqliteSessionStore } from "@terret/core/sessions";
import { SessionLog, type SessionStore } from "@terret/core";

const fixture = fileURLToPath(new URL("./fixtures/session_appender.ts", import.meta.url));

function textOf(w: number, i: number): string {
  const size = (w * 7919 + i * 104_729) % (i % 10 === 0 ? 262_144 : 2048);
  return `${w}:${i}:${"x".repeat(size)}`;
}

/** Runs the appender until it reported `target` durable seqs, kills it, and returns the highest it reported. */
async function runAndKill(kind: string, path: string, target: number): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fixture, kind, path],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let reported = 0, max = 0, killed = false, pending = "";
  for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      max = Math.max(max, Number(line));
      reported++;
    }
    if (!killed && reported >= target) {
      child.kill("SIGKILL");
      killed = true;
    }
  }
  const status = await child.status;
  assert.deepStrictEqual([killed, status.signal], [true, "SIGKILL"]);
  return max;
}

async function checkPrefix(store: SessionStore, reported: number): Promise<void> {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, store);
  try {
    const events = await log.read("crash");
    const n = events.length;
    assert.ok(n >= reported, `every reported append survived: ${n} stored, ${reported} reported`);
    assert.deepStrictEqual(
      events.map((event) => event.seq),
      Array.from({ length: n }, (_, i) => i + 1),
    );
    assert.equal(events[0]!.type, "session/created");
    let nextOf = new Map<number, number>();
    for (const event of events.slice(1)) {
      if (event.type === "turn/start") {
        nextOf = new Map();
        continue;
      }
      assert.equal(event.type, "assistant/chunk");
      const text = (event.payload as { text: string }).text;
      const [w, i] = text.split(":", 2).map(Number) as [number, number];
      assert.equal(text, textOf(w, i), `event ${event.seq} is whole`);
      assert.equal(i, nextOf.get(w) ?? 0, `writer ${w} appended in order`);
      nextOf.set(w, i + 1);
    }
    const after = await log.append("crash", { type: "turn/start", payload: {} });
    assert.equal(after.seq, n + 1);
    assert.deepStrictEqual((await log.read("crash", { from_seq: n })).map((e) => e.seq), [
      n,
      n + 1,
    ]);
  } finally {
    await ctx.dispose();
  }
}

for (const kind of ["jsonl", "sqlite"] as const) {
  Deno.test(`${kind} store: a SIGKILLed appender leaves a contiguous prefix with no torn event`, async () => {
    const dir = await Deno.makeTempDir({ prefix: `terret-crash-${kind}-` });
    const path = kind === "jsonl" ? join(dir, "store") : join(dir, "sessions.db");
    const open = (): SessionStore =>
      kind === "jsonl" ? JsonlSessionStore.open({ dir: path }) : SqliteSessionStore.open({ path });
    try {
      for (const round of [1, 2]) {
        const reported = await runAndKill(kind, path, 400 * round);
        const store = open();
        try {
          await checkPrefix(store, reported);
        } finally {
          await store.close();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("jsonl store: a torn last line is skipped on read and cut before the next append", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-torn-" });
  try {
    let store = JsonlSessionStore.open({ dir });
    let ctx = createContext({ mode: "test" });
    let log = new SessionLog(ctx, store);
    await log.create({ session_id: "s" });
    await log.append("s", { type: "user/message", payload: { content: "whole" } });
    await ctx.dispose();
    await store.close();
    const file = join(dir, "s.jsonl");
    const whole = await Deno.readTextFile(file);
    await Deno.writeTextFile(file, '{"id":"torn","session_id":"s","seq":3,"at":"2026', {
      append: true,
    });
    store = JsonlSessionStore.open({ dir });
    ctx = createContext({ mode: "test" });
    log = new SessionLog(ctx, store);
    assert.deepStrictEqual((await log.read("s")).map((e) => e.seq), [1, 2]);
    const next = await log.append("s", { type: "user/message", payload: { content: "after" } });
    assert.equal(next.seq, 3);
    const text = await Deno.readTextFile(file);
    assert.equal(text.slice(0, whole.length), whole);
    assert.deepStrictEqual(text.slice(whole.length).split("\n"), [JSON.stringify(next), ""]);
    assert.deepStrictEqual((await log.read("s")).map((e) => e.seq), [1, 2, 3]);
    await ctx.dispose();
    await store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("jsonl store: a second store on the same directory is refused while the first holds it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-lock-" });
  try {
    const first = JsonlSessionStore.open({ dir });
    assert.throws(() => JsonlSessionStore.open({ dir }), {
      name: "TerretError",
      code: "StoreLocked",
      message: `Cannot open the JSONL session store "${dir}": another store holds its lock`,
    });
    await first.close();
    const second = JsonlSessionStore.open({ dir });
    await second.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
