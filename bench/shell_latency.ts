// deno-lint-ignore-file no-console
/**
 * Shell latency: the wall time of `true` through the persistent shell (one bash per key, sentinel protocol)
 * against the floor, a raw `Deno.Command("bash", ["-c", "true"]).output()`; and, separately, what Terret's own
 * fresh-spawn path (the subprocess seam: sandbox wrap, process group, output caps, timeouts) adds over that raw
 * spawn, split into what Deno's own detached `spawn()` awaited through `status` costs over `output()` (a raw
 * spawn with the seam's options: its own process group, a cleared environment, piped output) and what the seam's
 * code adds on top. With docker available, the same inside the container: the persistent shell there, a raw
 * `docker exec <container> bash -c true`, and the subprocess seam's `docker exec`. The docker rows use the
 * `sandbox-docker` row and are skipped loudly when `probeSandboxProviders()` says docker cannot run here (no engine,
 * or no `$TERRET_SANDBOX_IMAGE`/`terret/sandbox:test` image: `tests/docker/make_image.sh` builds it).
 *
 * Paired rounds: each round runs every case a few times (the order rotated per round) and keeps each case's
 * median; figures are medians over rounds, ratios the medians of per-round ratios. Target: the persistent shell at
 * most half a raw spawn.
 *
 * Run: deno run -A bench/shell_latency.ts [--quick]
 *
 * @module
 */
import { type Context, createContext, Loader, type PluginLike } from "@terret/hames";
import { SandboxKey, SubprocessKey } from "@terret/core";
import {
  dockerSandboxPlugin,
  noneSandboxPlugin,
  probeSandboxProviders,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";
import { DEFAULT_SANDBOX_IMAGE } from "@terret/exec/sandbox";
import { median } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 5 : 25;
const PER_ROUND = quick ? 6 : 10;
const DOCKER_ROUNDS = quick ? 3 : 10;
const DOCKER_PER_ROUND = quick ? 3 : 5;

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

type Case = readonly [name: string, run: () => Promise<void>];

/** Per case, its per-round medians (ms): each round runs every case `perRound` times, order rotated. */
async function paired(
  cases: readonly Case[],
  rounds: number,
  perRound: number,
): Promise<Map<string, number[]>> {
  for (const [, run] of cases) for (let i = 0; i < 3; i++) await run();
  const byCase = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
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

function check(what: string, ok: boolean, detail: unknown): void {
  if (!ok) throw new Error(`${what} failed: ${JSON.stringify(detail)}`);
}

/** The three cases of one world: persistent shell, raw spawn of `argv`, and the subprocess seam's spawn. */
function cases(
  ctx: Context,
  dir: string,
  where: string,
  raw: readonly string[],
  label = raw.join(" "),
): Case[] {
  const shell = ctx.get(ShellKey);
  const subprocess = ctx.get(SubprocessKey);
  const decoder = new TextDecoder();
  return [
    [`persistent shell \`true\` (${where})`, async () => {
      const result = await shell.run("bench", "true");
      check("true", result.exitCode === 0, result);
    }],
    [`raw Deno.Command \`${label}\``, async () => {
      const out = await new Deno.Command(raw[0]!, { args: raw.slice(1), cwd: dir }).output();
      check(raw.join(" "), out.success, decoder.decode(out.stderr));
    }],
    [`raw detached spawn() + status \`${label}\``, async () => {
      // What the subprocess seam asks of Deno: its own process group, a cleared environment, piped output.
      const child = new Deno.Command(raw[0]!, {
        args: raw.slice(1),
        cwd: dir,
        detached: true,
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const [status] = await Promise.all([child.status, child.stdout.text(), child.stderr.text()]);
      check(`detached ${raw.join(" ")}`, status.success, status);
    }],
    [`Terret subprocess \`bash -c true\` (${where})`, async () => {
      const result = await subprocess.run(["bash", "-c", "true"], { cwd: dir });
      check("bash -c true", result.code === 0, result);
    }],
  ];
}

function report(title: string, timings: Map<string, number[]>, rounds: number): void {
  const names = [...timings.keys()];
  const [persistent, raw, detached, seam] = names as [string, string, string, string];
  const ratio = (a: string, b: string): number =>
    median(timings.get(a)!.map((value, round) => value / timings.get(b)![round]!));
  const width = Math.max(...names.map((name) => name.length));
  console.log(`\n${title}: median over ${rounds} rounds of each round's median, ms`);
  for (const name of names) {
    console.log(`  ${name.padEnd(width)}  ${median(timings.get(name)!).toFixed(3).padStart(9)} ms`);
  }
  const shellRatio = ratio(persistent, raw);
  console.log(
    `  persistent shell / raw spawn = ${shellRatio.toFixed(3)}x (target <= 0.5: ${
      shellRatio <= 0.5 ? "met" : "NOT met"
    })`,
  );
  const added = median(
    timings.get(seam)!.map((value, round) => value - timings.get(raw)![round]!),
  );
  console.log(
    `  Terret's spawn path / raw spawn = ${ratio(seam, raw).toFixed(2)}x (adds ${
      added.toFixed(3)
    } ms per spawn, median of per-round differences)`,
  );
  const diff = (a: string, b: string): number =>
    median(timings.get(a)!.map((value, round) => value - timings.get(b)![round]!));
  console.log(
    `    of which Deno's detached spawn() awaited through \`status\` (no Terret code) adds ${
      diff(detached, raw).toFixed(3)
    } ms over \`output()\`, and the seam's own code ${diff(seam, detached).toFixed(3)} ms`,
  );
}

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-shell-" }));
try {
  const host = await world(noneSandboxPlugin, { acknowledge_unsandboxed: true }, dir);
  const hostTimings = await paired(
    cases(host, dir, "host", ["bash", "-c", "true"]),
    ROUNDS,
    PER_ROUND,
  );
  await host.dispose();
  report("host", hostTimings, ROUNDS);
  const image = Deno.env.get("TERRET_SANDBOX_IMAGE") ?? DEFAULT_SANDBOX_IMAGE;
  const probe = (await probeSandboxProviders({ image })).find((p) => p.name === "docker")!;
  if (!probe.available) {
    console.warn(`SKIPPING the docker rows: ${probe.reason}`);
  } else {
    const docker = await world(dockerSandboxPlugin, { image }, dir);
    try {
      const sandbox = docker.get(SandboxKey);
      await sandbox.workspaceReady();
      const container = (sandbox as unknown as { readonly container: string }).container;
      const timings = await paired(
        cases(
          docker,
          dir,
          "docker",
          ["docker", "exec", container, "bash", "-c", "true"],
          "docker exec <container> bash -c true",
        ),
        DOCKER_ROUNDS,
        DOCKER_PER_ROUND,
      );
      report("docker", timings, DOCKER_ROUNDS);
    } finally {
      await docker.dispose();
    }
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
