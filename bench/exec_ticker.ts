// deno-lint-ignore-file no-console
/**
 * Event-loop responsiveness under child load: a 5 ms ticker runs while 8 `run()` children each stream 2 MB
 * (capped capture) and 2 PTYs each stream 20,000 lines, all through the subprocess seam. Prints the worst and the
 * 99th-percentile tick gap, next to a baseline where the same children write to /dev/null (same CPU contention
 * on the machine, nothing for Deno to read), so the cost of reading can be told from the cost of sharing cores.
 *
 * Run: deno run -A bench/exec_ticker.ts [--quick]
 *
 * @module
 */
import { createContext, Loader } from "@terret/hames";
import { SubprocessKey } from "@terret/core";
import { noneSandboxPlugin, subprocessPlugin, workspacePlugin } from "@terret/exec";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 1 : 5;
const BYTES = 2_000_000;
const LINES = 20_000;

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-ticker-" }));
const ctx = createContext({ mode: "production" });
await new Loader(ctx).load([
  { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
  { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
  { id: "subprocess", plugin: subprocessPlugin, config: {} },
]);
const subprocess = ctx.get(SubprocessKey);
await (await subprocess.ptySpawn(["true"], { cwd: dir })).exited; // load node-pty first

async function ticking(load: () => Promise<unknown>): Promise<number[]> {
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 5);
  await load();
  clearInterval(ticker);
  return gaps;
}

const runScript = (i: number, sink: string) =>
  `head -c ${BYTES} /dev/zero | tr '\\0' ${"abcdefgh"[i]} ${sink}`;
const ptyScript = (sink: string) =>
  `for ((i = 1; i <= ${LINES}; i++)); do echo line-$i; done ${sink}`;

async function load(sink: string): Promise<void> {
  const runs = Array.from(
    { length: 8 },
    (_, i) => subprocess.run(["bash", "-c", runScript(i, sink)], { cwd: dir, maxOutput: 64 }),
  );
  const ptys = await Promise.all(
    [0, 1].map(() => subprocess.ptySpawn(["bash", "-c", ptyScript(sink)], { cwd: dir })),
  );
  for (const pty of ptys) pty.onData(() => {});
  await Promise.all([...runs, ...ptys.map((pty) => pty.exited)]);
}

function summary(gaps: number[]): string {
  const sorted = [...gaps].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
  return `worst ${sorted.at(-1)!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ${gaps.length} ticks`;
}

const seam: number[] = [];
const baseline: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  seam.push(...await ticking(() => load("")));
  baseline.push(...await ticking(() => load(">/dev/null")));
}
await ctx.dispose();
await Deno.remove(dir, { recursive: true });
console.log(`5 ms ticker, ${ROUNDS} round(s) of 8 runs x ${BYTES} B + 2 PTYs x ${LINES} lines`);
console.log(`read through the seams: ${summary(seam)}`);
console.log(`baseline (/dev/null):   ${summary(baseline)}`);
