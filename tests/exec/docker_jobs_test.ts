/**
 * The docker lane of background jobs: a job runs inside the sandbox's container, and it dies with the container —
 * the processes it left behind in its own session (`setsid`) included, which no signal to its group reaches. Skips
 * loudly without an engine (`tests/docker/start_dockerd.sh`).
 */
import assert from "node:assert/strict";
import { createContext, Loader } from "@terret/hames";
import { memoryStorePlugin, SandboxKey, SessionsKey, sessionsPlugin } from "@terret/core";
import { type DockerSandbox, dockerSandboxPlugin } from "@terret/exec/sandbox";
import { fsPlugin, workspacePlugin } from "@terret/exec/fs";
import { JobsKey, jobsPlugin, subprocessPlugin } from "@terret/exec/process";
import { dockerLane } from "../docker/lane.ts";
import { until as waitUntil } from "../../exec/process/_testing.ts";

const lane = await dockerLane();

/** The shared polling wait, with this file's deadline (a deadline, not a timing claim). */
function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  return waitUntil(what, check, 30_000);
}

async function docker(...args: string[]): Promise<string> {
  const out = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test({
  name:
    "docker lane: a background job runs in the container and dies with it, setsid escapees included",
  ignore: lane.skip !== undefined,
  async fn() {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-docker-jobs-" }));
    const ctx = createContext({ mode: "test" });
    try {
      await new Loader(ctx).load([
        { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
        { id: "sessions", plugin: sessionsPlugin, config: {} },
        { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
        { id: "fs", plugin: fsPlugin, config: {} },
        { id: "sandbox", plugin: dockerSandboxPlugin, config: { image: lane.image } },
        { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 300 } },
        { id: "jobs", plugin: jobsPlugin, config: { report_lost: false } },
      ]);
      await ctx.get(SessionsKey).create({ session_id: "s1" });
      const jobs = ctx.get(JobsKey);
      const container = (ctx.get(SandboxKey) as DockerSandbox).container;
      // The escapee leaves the job's session and group; only the container's end can reach it.
      const job = await jobs.start(
        { agent_id: "a1", session_id: "s1" },
        "test -f /.dockerenv && echo in-container; setsid sleep 311 & echo ready; exec sleep 312",
      );
      await until(
        "the job to be ready",
        async () => (await Deno.readTextFile(job.output_path)) === "in-container\nready\n",
      );
      const inside = async () =>
        (await docker("exec", container, "ps", "-e", "-o", "args=")).split("\n")
          .filter((line) => line.startsWith("sleep 31")).sort();
      await until("both sleeps in the container", async () => (await inside()).length === 2);
      assert.deepStrictEqual(await inside(), ["sleep 311", "sleep 312"]);
      // Stopping a job reaches its tree inside the container (the sandbox's signal hook).
      const stopped = await jobs.start(
        { agent_id: "a1", session_id: "s1" },
        "sleep 313 & exec sleep 314",
      );
      await until("the stopped job's sleeps", async () => (await inside()).length === 4);
      assert.equal((await jobs.stop("a1", stopped.id)).status, "stopped");
      await until("the stopped job's tree to die", async () => (await inside()).length === 2);
      assert.deepStrictEqual(await inside(), ["sleep 311", "sleep 312"]);
      await docker("rm", "-f", container);
      await until("the job to end", () => jobs.get("a1", job.id)?.status !== "running");
      await until("its notice", async () => (await ctx.get(SessionsKey).head("s1")) === 6);
      const ended = jobs.get("a1", job.id)!;
      assert.equal(ended.status, "exited");
      assert.notEqual(ended.code, 0);
      assert.equal(await docker("ps", "-a", "-q", "--filter", `name=^${container}$`), "");
      const events = (await ctx.get(SessionsKey).read("s1")).map((event) => event.type);
      assert.deepStrictEqual(events, [
        "session/created",
        "job/started",
        "job/started",
        "job/ended",
        "job/ended",
        "input/queued",
      ]);
      // The host side of the job (its `docker exec` client) is gone with it.
      assert.throws(() => Deno.kill(-ended.pid, "SIGCONT"), Deno.errors.NotFound);
    } finally {
      await ctx.dispose();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
