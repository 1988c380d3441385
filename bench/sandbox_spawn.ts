// deno-lint-ignore-file no-console
/**
 * Sandbox spawn benchmark: median latency of running `true` through each provider's wrap, spawned as the subprocess
 * seam does (detached, cleared environment): a fresh `bash -c true` on the host (`none`, the baseline), the same
 * through `docker exec` into the long-lived container, and an empty `deno eval` through the Deno-permission
 * sandbox. Also the cost of `fs` containment: a contained 1 KiB read vs a bare `Deno.readFile`. Prints medians and
 * ratios against the baseline. Skips the docker row when no engine or image is available.
 *
 * Run: deno run -A bench/sandbox_spawn.ts [--quick]
 *
 * @module
 */
import type { Sandbox } from "@terret/core";
import { createNoneSandbox, DenoSandbox, DockerSandbox } from "@terret/exec/sandbox";
import { DenoFileSystem } from "@terret/exec/fs";
import { type Latency, measureLatency } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const RUNS = quick ? 10 : 40;

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

const rows: Latency[] = [];
try {
  const none = createNoneSandbox([ws]);
  rows.push(
    await measureLatency(
      "bash -c true (none, fresh spawn)",
      RUNS,
      () => spawn(none, ["bash", "-c", "true"]),
    ),
  );
  if (await dockerUsable()) {
    await using docker = new DockerSandbox({ dirs: [ws] });
    const started = performance.now();
    await docker.workspaceReady();
    console.log(`docker container start: ${(performance.now() - started).toFixed(0)} ms`);
    rows.push(await measureLatency("true via docker exec", RUNS, () => spawn(docker, ["true"])));
  } else {
    console.warn("!!! docker row SKIPPED: no engine or no terret/sandbox:test image");
  }
  const deno = new DenoSandbox({ dirs: [ws] });
  rows.push(
    await measureLatency(
      "deno eval '' (deno sandbox)",
      RUNS,
      () => spawn(deno, ["deno", "eval", ""]),
    ),
  );
  const fs = new DenoFileSystem({ dirs: [ws] });
  const reads = RUNS * 25;
  rows.push(
    await measureLatency("Deno.readFile 1 KiB (bare)", reads, () => Deno.readFile(`${ws}/kib.txt`)),
  );
  rows.push(await measureLatency("fs.read 1 KiB (contained)", reads, () => fs.read("kib.txt")));
} finally {
  await Deno.remove(ws, { recursive: true });
}

const width = Math.max(...rows.map((row) => row.name.length));
const base = rows[0]!.medianMs;
for (const row of rows) {
  console.log(
    `${row.name.padEnd(width)}  median ${row.medianMs.toFixed(2).padStart(8)} ms  p90 ${
      row.p90Ms.toFixed(2).padStart(8)
    } ms  x${(row.medianMs / base).toFixed(2)} of the fresh bash spawn`,
  );
}
