// deno-lint-ignore-file no-console
/**
 * Every sandbox provider in one run, against one baseline: a raw `Deno.Command("true")` spawn (no sandbox, no
 * seam), the fastest plain way to run a program.
 *
 * - Spawns: `true` wrapped by `none`, `bwrap` (a fresh bubblewrap sandbox per spawn) and `docker` (`docker exec`
 *   into the long-lived container), and for `deno`, which runs Deno programs only, an empty `deno eval ''`; each
 *   spawned as the subprocess seam does (detached, cleared environment), awaited through `status`.
 * - The persistent shell: `true` through the `shell` row's bash under `none`, `bwrap` and `docker` (one bash per
 *   key, started once; `deno` refuses bash, so it has no row).
 *
 * Paired rounds: each round runs every case a few times (the order rotated per round) and keeps each case's
 * median; figures are medians over rounds, ratios the medians of per-round ratios against the baseline. A provider
 * that cannot run here (no Docker engine or image, no bubblewrap or user namespaces) is skipped loudly.
 *
 * Run: deno run -A bench/sandbox_providers.ts [--quick]
 *
 * @module
 */
import { type Context, createContext, Loader, type PluginLike } from "@terret/hames";
import type { Sandbox } from "@terret/core";
import {
  bwrapSandboxPlugin,
  dockerSandboxPlugin,
  noneSandboxPlugin,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";
import {
  BwrapSandbox,
  createNoneSandbox,
  DEFAULT_SANDBOX_IMAGE,
  DenoSandbox,
  DockerSandbox,
  probeSandboxProviders,
} from "@terret/exec/sandbox";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 3 : 10;
const PER_ROUND = quick ? 3 : 5;
const BASELINE = "raw Deno.Command(true)";

type Case = readonly [name: string, run: () => Promise<unknown>];

async function rawTrue(): Promise<void> {
  const status = await new Deno.Command("true", {
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn().status;
  if (!status.success) throw new Error(`true failed with ${status.code}`);
}

async function spawn(sandbox: Sandbox, argv: string[], cwd: string): Promise<void> {
  const wrapped = await sandbox.wrap(argv, { cwd });
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

async function world(sandbox: PluginLike, config: unknown, dir: string): Promise<Context> {
  const ctx = createContext({ mode: "production" });
  await new Loader(ctx).load([
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    { id: "sandbox", plugin: sandbox, config },
    { id: "subprocess", plugin: subprocessPlugin, config: {} },
    { id: "shell", plugin: shellPlugin, config: {} },
  ]);
  return ctx;
}

function shellCase(name: string, ctx: Context): Case {
  const shell = ctx.get(ShellKey);
  return [name, async () => {
    const ran = await shell.run("bench", "true", { timeout: 30_000 });
    if (ran.exitCode !== 0) throw new Error(`true in the ${name} shell exited ${ran.exitCode}`);
  }];
}

async function paired(cases: readonly Case[]): Promise<Map<string, number[]>> {
  for (const [, run] of cases) for (let i = 0; i < 2; i++) await run();
  const byCase = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const [name, run] = cases[(k + round) % cases.length]!;
      const times: number[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const start = performance.now();
        await run();
        times.push(performance.now() - start);
      }
      byCase.get(name)!.push(median(times));
    }
  }
  return byCase;
}

function report(title: string, timings: Map<string, number[]>): void {
  console.log(`\n${title}`);
  const width = Math.max(...[...timings.keys()].map((name) => name.length));
  const base = timings.get(BASELINE)!;
  for (const [name, values] of timings) {
    const ratio = median(values.map((value, round) => value / base[round]!));
    console.log(
      `  ${name.padEnd(width)}  median ${median(values).toFixed(3).padStart(8)} ms  x${
        ratio.toFixed(2)
      } of ${BASELINE}`,
    );
  }
}

const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-sbx-" }));
const image = Deno.env.get("TERRET_SANDBOX_IMAGE") ?? DEFAULT_SANDBOX_IMAGE;
const probes = new Map((await probeSandboxProviders({ image })).map((p) => [p.name, p]));
for (const name of ["docker", "bwrap"] as const) {
  if (!probes.get(name)!.available) {
    console.warn(`!!! ${name} rows SKIPPED: ${probes.get(name)!.reason}`);
  }
}
const worlds: Context[] = [];
await using docker = new DockerSandbox({ dirs: [ws], image });
await using bwrap = new BwrapSandbox({ dirs: [ws] });
try {
  const spawns: Case[] = [
    [BASELINE, rawTrue],
    ["true via none", () => spawn(createNoneSandbox([ws]), ["true"], ws)],
  ];
  const deno = new DenoSandbox({ dirs: [ws] });
  spawns.push(["deno eval '' via deno", () => spawn(deno, ["deno", "eval", ""], ws)]);
  if (probes.get("bwrap")!.available) {
    await bwrap.workspaceReady();
    spawns.push(["true via bwrap", () => spawn(bwrap, ["true"], ws)]);
  }
  if (probes.get("docker")!.available) {
    await docker.workspaceReady();
    spawns.push(["true via docker exec", () => spawn(docker, ["true"], ws)]);
  }
  console.log(
    `median of ${ROUNDS} rounds (order rotated) of each round's median of ${PER_ROUND}; ` +
      "ratios: medians of per-round ratios",
  );
  report("one spawn of a program", await paired(spawns));

  const shells: Case[] = [[BASELINE, rawTrue]];
  const none = await world(noneSandboxPlugin, { acknowledge_unsandboxed: true }, ws);
  worlds.push(none);
  shells.push(shellCase("persistent shell true (none)", none));
  if (probes.get("bwrap")!.available) {
    const ctx = await world(bwrapSandboxPlugin, {}, ws);
    worlds.push(ctx);
    shells.push(shellCase("persistent shell true (bwrap)", ctx));
  }
  if (probes.get("docker")!.available) {
    const ctx = await world(dockerSandboxPlugin, { image }, ws);
    worlds.push(ctx);
    shells.push(shellCase("persistent shell true (docker)", ctx));
  }
  console.log(
    "\n(deno: the deno sandbox runs Deno programs only, so it refuses bash and has no shell row)",
  );
  report("the persistent shell", await paired(shells));
} finally {
  for (const ctx of worlds) await ctx.dispose();
  await Deno.remove(ws, { recursive: true });
}
