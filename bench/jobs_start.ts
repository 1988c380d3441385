// deno-lint-ignore-file no-console
/**
 * Background job start: the time from asking for a background command to holding its answer, through the `jobs`
 * row (`Jobs.start`: the subprocess seam's wrap and process group, the output file, the durable `job/started` on
 * the memory store) against the baseline, the fastest plain way to do the same work: a raw detached
 * `Deno.Command("bash", ["-c", "exit 0"]).spawn()` with piped output and its output file opened. Each measured
 * start is followed, untimed, by waiting for its end, so no case runs with the other's children alive.
 *
 * Paired rounds: each round runs both cases a few times (the order rotated per round) and keeps each case's median;
 * figures are medians over rounds, the ratio the median of per-round ratios.
 *
 * Run: deno run -A bench/jobs_start.ts [--quick]
 *
 * @module
 */
import { createContext, Loader } from "@terret/hames";
import { memoryStorePlugin, SessionsKey, sessionsPlugin } from "@terret/core";
import { fsPlugin, workspacePlugin } from "@terret/exec/fs";
import { noneSandboxPlugin } from "@terret/exec/sandbox";
import { JobsKey, jobsPlugin, subprocessPlugin } from "@terret/exec/process";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 5 : 20;
const PER_ROUND = quick ? 4 : 8;

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-jobs-" }));
const ctx = createContext({ mode: "production" });
try {
  await new Loader(ctx).load([
    { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
    { id: "sessions", plugin: sessionsPlugin, config: {} },
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    { id: "fs", plugin: fsPlugin, config: {} },
    { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
    { id: "subprocess", plugin: subprocessPlugin, config: {} },
    { id: "jobs", plugin: jobsPlugin, config: { report_lost: false, keep_ended: 1_000_000 } },
  ]);
  await ctx.get(SessionsKey).create({ session_id: "bench" });
  const jobs = ctx.get(JobsKey);
  const owner = { agent_id: "bench", session_id: "bench" };
  let raw = 0;
  let after: () => Promise<void> = () => Promise.resolve();
  const cases: [string, () => Promise<void>][] = [
    ["raw detached spawn + output file", async () => {
      const file = await Deno.open(`${dir}/raw-${++raw}.log`, { createNew: true, write: true });
      const child = new Deno.Command("bash", {
        args: ["-c", "exit 0"],
        cwd: dir,
        detached: true,
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      after = async () => {
        await Promise.all([
          child.status,
          child.stdout.pipeTo(file.writable),
          child.stderr.cancel(),
        ]);
      };
    }],
    ["Jobs.start (seam, file, durable job/started)", async () => {
      const job = await jobs.start(owner, "exit 0");
      after = async () => {
        while (jobs.get("bench", job.id)?.status === "running") {
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      };
    }],
  ];
  for (const [, run] of cases) {
    for (let i = 0; i < 3; i++) {
      await run();
      await after();
    }
  }
  const timings = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const [name, run] = cases[(k + round) % cases.length]!;
      const times: number[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
        await after();
      }
      timings.get(name)!.push(median(times));
    }
  }
  const [baseline, job] = cases.map(([name]) => name) as [string, string];
  const width = Math.max(baseline.length, job.length);
  console.log(`background job start: median over ${ROUNDS} rounds of each round's median, ms`);
  for (const name of [baseline, job]) {
    console.log(`  ${name.padEnd(width)}  ${median(timings.get(name)!).toFixed(3).padStart(8)} ms`);
  }
  const ratio = median(
    timings.get(job)!.map((value, round) => value / timings.get(baseline)![round]!),
  );
  console.log(`  Jobs.start / raw spawn = ${ratio.toFixed(2)}x`);
} finally {
  await ctx.dispose();
  await Deno.remove(dir, { recursive: true });
}
