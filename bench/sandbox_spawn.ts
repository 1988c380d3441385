// deno-lint-ignore-file no-console
/**
 * Sandbox spawn benchmark: median latency of running `true` through each provider's wrap, spawned as the subprocess
 * seam does (detached, cleared environment): a fresh `bash -c true` on the host (`none`, the baseline), the same
 * through `docker exec` into the long-lived container, and an empty `deno eval` through the Deno-permission
 * sandbox. Also the cost of `fs` containment: a contained 1 KiB read vs a bare `Deno.readFile`. Each group runs in
 * rounds, the order rotated per round; prints medians and the medians of per-round ratios against the group's
 * baseline. Skips the docker row when no engine or image is available. `bench/shell_latency.ts` compares a spawn
 * like these (detached, awaited through `status`) with a plain `Deno.Command.output()`.
 *
 * Run: deno run -A bench/sandbox_spawn.ts [--quick]
 *
 * @module
 */
import type { Sandbox } from "@terret/core";
import { createNoneSandbox, DenoSandbox, DockerSandbox } from "@terret/exec/sandbox";
import { DenoFileSystem } from "@terret/exec/fs";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 3 : 10;
const PER_ROUND = quick ? 3 : 5;

const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-" }));
await Deno.writeTextFile(`${ws}/kib.txt`, "x".repeat(1024));

async function spawn(sandbox: Sandbox, argv: string[]): Promise<void> {
  const wrapped = await sandbox.wrap(argv, { cwd: ws });
  const status = await new Deno.Command(wrapped.argv[0]!, {
    args: wrapped.argv.slice(1),
    cwd: wrapped.cwd,
    env: { ...wrapped.env },
    clearEnv: true,
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn().status;
  if (!status.success) throw new Error(`${argv.join(" ")} failed with ${status.code}`);
}

async function dockerUsable(): Promise<boolean> {
  try {
    const out = await new Deno.Command("docker", {
      args: ["image", "inspect", "terret/sandbox:test"],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

type Case = readonly [name: string, run: () => Promise<unknown>];

/**
 * Runs each group's cases in rounds, the order rotated per round, `perRound` runs of each per round; returns each
 * case's per-round medians (ms).
 */
async function paired(cases: readonly Case[], perRound: number): Promise<Map<string, number[]>> {
  for (const [, run] of cases) for (let i = 0; i < 2; i++) await run();
  const byCase = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const [name, run] = cases[(k + round) % cases.length]!;
      const times: number[] = [];
      for (let i = 0; i < perRound; i++) {
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
      }
      byCase.get(name)!.push(median(times));
    }
  }
  return byCase;
}

function report(timings: Map<string, number[]>, baseline: string): void {
  const width = Math.max(...[...timings.keys()].map((name) => name.length));
  const base = timings.get(baseline)!;
  for (const [name, values] of timings) {
    const ratio = median(values.map((value, round) => value / base[round]!));
    console.log(
      `${name.padEnd(width)}  median ${median(values).toFixed(3).padStart(8)} ms  x${
        ratio.toFixed(2)
      } of ${baseline}`,
    );
  }
}

try {
  const none = createNoneSandbox([ws]);
  const spawns: Case[] = [
    ["bash -c true (none, fresh spawn)", () => spawn(none, ["bash", "-c", "true"])],
  ];
  const deno = new DenoSandbox({ dirs: [ws] });
  spawns.push(["deno eval '' (deno sandbox)", () => spawn(deno, ["deno", "eval", ""])]);
  await using docker = new DockerSandbox({ dirs: [ws] });
  if (await dockerUsable()) {
    const started = performance.now();
    await docker.workspaceReady();
    console.log(`docker container start: ${(performance.now() - started).toFixed(0)} ms`);
    spawns.push(["true via docker exec", () => spawn(docker, ["true"])]);
  } else {
    console.warn("!!! docker row SKIPPED: no engine or no terret/sandbox:test image");
  }
  console.log(
    `spawns: median of ${ROUNDS} rounds (order rotated) of each round's median of ${PER_ROUND}; ` +
      "ratios: medians of per-round ratios",
  );
  report(await paired(spawns, PER_ROUND), spawns[0]![0]);
  const fs = new DenoFileSystem({ dirs: [ws] });
  console.log(`reads: the same, ${PER_ROUND * 25} reads per case and round`);
  report(
    await paired([
      ["Deno.readFile 1 KiB (bare)", () => Deno.readFile(`${ws}/kib.txt`)],
      ["fs.read 1 KiB (contained)", () => fs.read("kib.txt")],
    ], PER_ROUND * 25),
    "Deno.readFile 1 KiB (bare)",
  );
} finally {
  await Deno.remove(ws, { recursive: true });
}
