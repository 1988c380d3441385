/**
 * The docker lane of the process seams: run, pty and shell through the `sandbox-docker` row, with timeouts reaching
 * the process tree inside the container. Skips loudly without an engine (`tests/docker/start_dockerd.sh`); builds
 * the image when only it is missing (`tests/docker/make_image.sh`).
 */
import assert from "node:assert/strict";
import { createContext, Loader } from "@terret/hames";
import { SubprocessKey } from "@terret/core";
import {
  dockerSandboxPlugin,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  workspacePlugin,
} from "@terret/exec";
import { dockerLane } from "../docker/lane.ts";

const lane = await dockerLane();
const unavailable = lane.skip;

async function dockerWorld() {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-docker-procs-" }));
  const ctx = createContext({ mode: "test" });
  await new Loader(ctx).load([
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    { id: "sandbox", plugin: dockerSandboxPlugin, config: { image: lane.image } },
    { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 300 } },
    { id: "shell", plugin: shellPlugin, config: {} },
  ]);
  return {
    ctx,
    dir,
    async [Symbol.asyncDispose]() {
      await ctx.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test({
  name:
    "docker lane: run, pty and shell execute inside the container, in the bind-mounted workspace",
  ignore: unavailable !== undefined,
  async fn() {
    await using w = await dockerWorld();
    const subprocess = w.ctx.get(SubprocessKey);
    await Deno.writeTextFile(`${w.dir}/host.txt`, "written on the host\n");
    const ran = await subprocess.run(
      ["bash", "-c", "test -f /.dockerenv && echo in-container; pwd; cat host.txt"],
      { cwd: w.dir },
    );
    assert.deepStrictEqual(
      [ran.stdout, ran.code],
      [`in-container\n${w.dir}\nwritten on the host\n`, 0],
    );
    const pty = await subprocess.ptySpawn(
      ["bash", "-c", "test -f /.dockerenv && echo pty-in-container"],
      { cwd: w.dir },
    );
    let out = "";
    pty.onData((data) => out += data);
    assert.deepStrictEqual(await pty.exited, { code: 0, signal: null, success: true });
    assert.equal(out, "pty-in-container\r\n");
    const shell = w.ctx.get(ShellKey);
    await shell.run("agent", "cd /tmp && export IN=container");
    const state = await shell.run("agent", "test -f /.dockerenv && echo $IN $(pwd)");
    assert.deepStrictEqual([state.output, state.exitCode], ["container /tmp\n", 0]);
  },
});

Deno.test({
  name:
    "docker lane: a timeout kills the process tree inside the container, and the shell restarts fresh",
  ignore: unavailable !== undefined,
  async fn() {
    await using w = await dockerWorld();
    const subprocess = w.ctx.get(SubprocessKey);
    const timed = await subprocess.run(
      ["bash", "-c", "sleep 301 & sleep 302 & wait"],
      { cwd: w.dir, timeout: 500 },
    );
    assert.equal(timed.timedOut, true);
    const shell = w.ctx.get(ShellKey);
    await shell.run("agent", "export X=1; sleep 303 &");
    const killed = await shell.run("agent", "sleep 304", { timeout: 500 });
    assert.deepStrictEqual([killed.timedOut, killed.sessionEnded], [true, true]);
    const fresh = await shell.run("agent", "echo ${X:-unset}");
    assert.deepStrictEqual([fresh.output, fresh.freshSession], ["unset\n", true]);
    const left = await subprocess.run(["ps", "-e", "-o", "args="], { cwd: w.dir });
    assert.deepStrictEqual(
      left.stdout.split("\n").filter((line) => line.startsWith("sleep 30")),
      [],
    );
  },
});
