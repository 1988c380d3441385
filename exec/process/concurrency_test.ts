import assert from "node:assert/strict";
import { SubprocessKey } from "@terret/core";
import { subprocessPlugin } from "./subprocess.ts";
import { mountWorld } from "./_testing.ts";

/** A 5 ms ticker: how many ticks fired while `busy` ran, and the worst gap between two ticks. */
async function whileTicking<T>(
  busy: () => Promise<T>,
): Promise<{ value: T; ticks: number; worstGap: number }> {
  let last = performance.now();
  let worstGap = 0;
  let ticks = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worstGap = Math.max(worstGap, now - last);
    last = now;
    ticks++;
  }, 5);
  try {
    const value = await busy();
    return { value, ticks, worstGap };
  } finally {
    clearInterval(ticker);
  }
}

Deno.test("8 concurrent spawns and 2 PTYs stream while the event loop keeps ticking", async () => {
  await using w = await mountWorld({
    rows: [{ id: "subprocess", plugin: subprocessPlugin, config: {} }],
  });
  const subprocess = w.ctx.get(SubprocessKey);
  // Load node-pty (a one-time synchronous module and addon load) before the ticker starts.
  await (await subprocess.ptySpawn(["true"], { cwd: w.dir })).exited;
  const bytesPerRun = 2_000_000;
  const lines = 20_000;
  let ticksWhileStreaming = 0;
  let streamingTicks: number | undefined;
  const { value, ticks, worstGap } = await whileTicking(async () => {
    const runs = Array.from({ length: 8 }, (_, i) =>
      subprocess.run(
        ["bash", "-c", `head -c ${bytesPerRun} /dev/zero | tr '\\0' ${"abcdefgh"[i]}`],
        { cwd: w.dir, maxOutput: 64 },
      ));
    const ptys = await Promise.all(
      [0, 1].map(() =>
        subprocess.ptySpawn([
          "bash",
          "-c",
          `for ((i = 1; i <= ${lines}; i++)); do echo line-$i; done`,
        ], {
          cwd: w.dir,
        })
      ),
    );
    const received = ptys.map((pty) => {
      let bytes = 0;
      let first = true;
      pty.onData((data) => {
        if (first) {
          first = false;
          streamingTicks = ticksWhileStreaming;
        }
        bytes += data.length;
      });
      return () => bytes;
    });
    const counting = setInterval(() => ticksWhileStreaming++, 5);
    try {
      const results = await Promise.all(runs);
      const exits = await Promise.all(ptys.map((pty) => pty.exited));
      return { results, exits, bytes: received.map((read) => read()) };
    } finally {
      clearInterval(counting);
    }
  });
  let expectedLineBytes = 0;
  for (let i = 1; i <= lines; i++) expectedLineBytes += `line-${i}\r\n`.length;
  assert.deepStrictEqual(
    value.results.map((r) => [r.code, r.stdout.length, r.truncated.stdout]),
    Array.from({ length: 8 }, () => [
      0,
      64 + `\n[… ${bytesPerRun - 64} bytes truncated …]\n`.length,
      bytesPerRun - 64,
    ]),
  );
  assert.deepStrictEqual(value.exits, [
    { code: 0, signal: null, success: true },
    { code: 0, signal: null, success: true },
  ]);
  assert.deepStrictEqual(value.bytes, [expectedLineBytes, expectedLineBytes]);
  // The loop was never blocked: the ticker kept firing after the PTYs started streaming.
  assert.equal(streamingTicks !== undefined && ticksWhileStreaming > streamingTicks, true);
  assert.equal(ticks > 0, true);
  // deno-lint-ignore no-console
  console.log(
    `worst tick gap ${
      worstGap.toFixed(1)
    } ms over ${ticks} ticks (5 ms ticker; 8 runs × ${bytesPerRun} B, 2 PTYs × ${lines} lines)`,
  );
});
