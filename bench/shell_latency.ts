// deno-lint-ignore-file no-console
/**
 * Shell latency: the median wall time of `true` through the persistent shell (one bash per key, sentinel
 * protocol) vs a fresh `bash -c true` through the subprocess seam vs the docker exec path (a fresh
 * `docker exec … bash -c true`, and the persistent shell inside the container). Prints medians and ratios.
 * Target: the persistent shell at most half the fresh spawn. The docker rows use the `sandbox-docker` row and are
 * skipped loudly when `probeSandboxProviders()` says docker cannot run here (no engine, or no
 * `$TERRET_SANDBOX_IMAGE`/`terret/sandbox:test` image: `tests/docker/make_image.sh` builds it).
 *
 * Run: deno run -A bench/shell_latency.ts [--quick]
 *
 * @module
 */
import { type Context, createContext, Loader, type PluginLike } from "@terret/hames";
import { SubprocessKey } from "@terret/core";
import { DEFAULT_SANDBOX_IMAGE } from "@terret/exec/sandbox";
import {
  dockerSandboxPlugin,
  noneSandboxPlugin,
  probeSandboxProviders,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";

const quick = Deno.args.includes("--quick");
const RUNS = quick ? 30 : 200;
const DOCKER_RUNS = quick ? 10 : 40;

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

async function median(runs: number, fn: () => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.max(3, runs / 10); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function measure(ctx: Context, dir: string, runs: number): Promise<[number, number]> {
  const shell = ctx.get(ShellKey);
  const subprocess = ctx.get(SubprocessKey);
  const persistent = await median(runs, async () => {
    const result = await shell.run("bench", "true");
    if (result.exitCode !== 0) throw new Error(`true failed: ${JSON.stringify(result)}`);
  });
  const fresh = await median(runs, async () => {
    const result = await subprocess.run(["bash", "-c", "true"], { cwd: dir });
    if (result.code !== 0) throw new Error(`bash -c true failed: ${JSON.stringify(result)}`);
  });
  return [persistent, fresh];
}

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-shell-" }));
const rows: [string, number][] = [];
try {
  const host = await world(noneSandboxPlugin, { acknowledge_unsandboxed: true }, dir);
  const [persistent, fresh] = await measure(host, dir, RUNS);
  await host.dispose();
  rows.push(["persistent shell `true` (host)", persistent], ["fresh `bash -c true` (host)", fresh]);
  const image = Deno.env.get("TERRET_SANDBOX_IMAGE") ?? DEFAULT_SANDBOX_IMAGE;
  const probe = (await probeSandboxProviders({ image })).find((p) => p.name === "docker")!;
  if (!probe.available) {
    console.warn(`SKIPPING the docker rows: ${probe.reason}`);
  } else {
    const docker = await world(dockerSandboxPlugin, { image }, dir);
    const [dockerPersistent, dockerFresh] = await measure(docker, dir, DOCKER_RUNS);
    await docker.dispose();
    rows.push(
      ["persistent shell `true` (docker)", dockerPersistent],
      ["fresh `docker exec … bash -c true`", dockerFresh],
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}

const width = Math.max(...rows.map(([name]) => name.length));
const base = rows[0]![1];
console.log(`median of ${RUNS} runs (docker: ${DOCKER_RUNS}), ms; ratio to the persistent shell`);
for (const [name, ms] of rows) {
  console.log(
    `${name.padEnd(width)}  ${ms.toFixed(3).padStart(9)} ms  ${
      (ms / base).toFixed(1).padStart(6)
    }x`,
  );
}
const fresh = rows[1]![1];
console.log(
  `persistent / fresh = ${(base / fresh).toFixed(3)} (target <= 0.5: ${
    base / fresh <= 0.5 ? "met" : "NOT met"
  })`,
);
