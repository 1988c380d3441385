import assert from "node:assert/strict";
import { dirname } from "node:path";
import { definePlugin } from "@terret/hames";
import { AgentDisposed, SessionsKey } from "@terret/core";
import { AgentClockKey } from "@terret/core/agents";
import { JobsKey } from "../process/jobs.ts";
import { jobsPlugin } from "../process/jobs_plugin.ts";
import { liveInGroup, liveOf, until } from "../process/_testing.ts";
import { mountTools, textOf, type ToolWorld } from "./_testing.ts";
import { shellWord } from "../../tests/shell_words.ts";

/** A clock the test moves: job durations are read on it. */
function manualClock(): {
  ms: number;
  row: { id: string; plugin: ReturnType<typeof definePlugin> };
} {
  const clock = {
    ms: 0,
    row: {
      id: "agents.clock",
      plugin: definePlugin({
        name: "manual-clock",
        provides: [AgentClockKey],
        apply(ctx) {
          ctx.provide(AgentClockKey, { now: () => clock.ms });
        },
      }),
    },
  };
  return clock;
}

async function world(
  clock = manualClock(),
  jobs: Record<string, unknown> = {},
): Promise<ToolWorld> {
  return await mountTools({
    rows: [clock.row, { id: "jobs", plugin: jobsPlugin, config: { report_lost: false, ...jobs } }],
  });
}

async function jobEvents(w: ToolWorld): Promise<{ type: string; payload: unknown }[]> {
  return (await w.ctx.get(SessionsKey).read("s1"))
    .filter((event) => event.type.startsWith("job/") || event.type === "input/queued")
    .map(({ type, payload }) => ({ type, payload }));
}

async function fifo(dir: string): Promise<string> {
  const path = `${dir}/gate.fifo`;
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(made.code, 0);
  return path;
}

Deno.test("Bash run_in_background: the answer comes at once, Read shows the output before and after the end, and the end is noticed", async () => {
  const clock = manualClock();
  await using w = await world(clock);
  // The job waits on a fifo the test controls instead of sleeping: `sleep 5; echo done` with the 5 s under control.
  const gate = await fifo(w.dir);
  const command = `echo started; cat ${shellWord(gate)} > /dev/null; echo done`;
  const started = await w.call("Bash", { command, run_in_background: true });
  const dir = w.ctx.get(JobsKey).dirOf("agent-1");
  const log = `${dir}/1.log`;
  assert.deepStrictEqual([started.is_error, textOf(started)], [
    false,
    `Command running in background with ID: 1. Output is being written to: ${log}\n(Read that file for its ` +
    `output; stop the job with TaskStop {"task_id": "1"}; you will be told when it ends.)`,
  ]);
  await until("the job's first line", async () => (await Deno.readTextFile(log)) === "started\n");
  const before = await w.call("Read", { file_path: log });
  assert.deepStrictEqual([before.is_error, textOf(before)], [false, "     1\tstarted"]);
  assert.equal(w.ctx.get(JobsKey).get("agent-1", "1")?.status, "running");
  clock.ms = 41_400;
  await Deno.writeTextFile(gate, "go\n");
  await until("the job's end", () => w.ctx.get(JobsKey).get("agent-1", "1")?.status === "exited");
  await until("the notice", async () => (await jobEvents(w)).length === 3);
  const after = await w.call("Read", { file_path: log });
  assert.deepStrictEqual([after.is_error, textOf(after)], [false, "     1\tstarted\n     2\tdone"]);
  // The output directory is read-only for the model.
  const write = await w.call("Write", { file_path: log, content: "forged" });
  assert.deepStrictEqual([write.is_error, textOf(write)], [
    true,
    `Tool "Write" failed: Cannot write "${log}": it is in a read-only directory (${
      w.ctx.get(JobsKey).dirOf("").slice(0, -1)
    }) ` +
    `(the granted workspace is ${w.dir})`,
  ]);
  const pid = w.ctx.get(JobsKey).get("agent-1", "1")!.pid;
  assert.deepStrictEqual(await jobEvents(w), [
    { type: "job/started", payload: { job_id: "1", command, output_path: log, call_id: "call-1" } },
    {
      type: "job/ended",
      payload: {
        job_id: "1",
        reason: "exited",
        code: 0,
        signal: null,
        duration_ms: 41_400,
        output_bytes: 13,
        dropped_bytes: 0,
      },
    },
    {
      type: "input/queued",
      payload: {
        kind: "steer",
        content: `job 1 exited 0 after 41 s (command: ${command}; output: ${log})`,
        wake: false,
      },
    },
  ]);
  assert.deepStrictEqual(await liveInGroup(pid), []);
  // A second job gets the next id.
  const second = await w.call("Bash", { command: "echo two", run_in_background: true });
  assert.match(textOf(second), /^Command running in background with ID: 2\. /);
});

Deno.test("an output file left by a start that never reached the log keeps its bytes, and the job takes the next id", async () => {
  await using w = await world();
  // A process died after creating job 1's file and before its job/started was durable (the job may run on).
  const dir = w.ctx.get(JobsKey).dirOf("agent-1");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/1.log`, "an orphan's output\n");
  const started = await w.call("Bash", { command: "echo fresh", run_in_background: true });
  assert.equal(started.is_error, false, textOf(started));
  assert.match(
    textOf(started),
    new RegExp(
      `^Command running in background with ID: 2\\. Output is being written to: ${dir}/2\\.log\\n`,
    ),
  );
  await until("the job's end", () => w.ctx.get(JobsKey).get("agent-1", "2")?.status === "exited");
  assert.equal(await Deno.readTextFile(`${dir}/1.log`), "an orphan's output\n");
  assert.equal(await Deno.readTextFile(`${dir}/2.log`), "fresh\n");
  assert.deepStrictEqual(
    (await jobEvents(w)).filter((event) => event.type === "job/started").map((event) =>
      (event.payload as { job_id: string }).job_id
    ),
    ["2"],
  );
});

Deno.test("TaskStop kills a job and every grandchild it started, leaving no process behind", async () => {
  await using w = await world();
  // One grandchild ignores SIGTERM, so only the SIGKILL to the group ends it.
  const script = [
    "sleep 300 & echo $!",
    `sh -c 'trap "" TERM; exec sleep 300' & echo $!`,
    "wait",
  ].join("\n");
  const started = await w.call("Bash", { command: script, run_in_background: true });
  assert.equal(started.is_error, false);
  const job = w.ctx.get(JobsKey).get("agent-1", "1")!;
  await until(
    "both grandchildren",
    async () => (await Deno.readTextFile(job.output_path)).trim().split("\n").length === 2,
  );
  const grandchildren = (await Deno.readTextFile(job.output_path)).trim().split("\n").map(Number);
  const stop = await w.call("TaskStop", { task_id: "1" });
  assert.deepStrictEqual([stop.is_error, textOf(stop)], [
    false,
    `Stopped job 1 after 0 s; its output is in ${job.output_path}`,
  ]);
  assert.deepStrictEqual(await liveInGroup(job.pid), []);
  assert.deepStrictEqual(await liveOf(grandchildren), []);
  const ended = w.ctx.get(JobsKey).get("agent-1", "1")!;
  assert.deepStrictEqual([ended.status, ended.signal, ended.code], ["stopped", "SIGTERM", 143]);
  // The model asked for it: recorded, not announced.
  assert.deepStrictEqual((await jobEvents(w)).map((event) => event.type), [
    "job/started",
    "job/ended",
  ]);
  assert.equal(((await jobEvents(w))[1]!.payload as { reason: string }).reason, "stopped");
  // Stopping it again says how it ended; it is not an error.
  const again = await w.call("TaskStop", { task_id: 1 });
  assert.deepStrictEqual([again.is_error, textOf(again)], [
    false,
    `job 1 had already ended: it was stopped after 0 s; its output is in ${job.output_path}`,
  ]);
});

Deno.test("TaskStop: an unknown id, or none, is an error written for the model that lists the jobs", async () => {
  await using w = await world();
  const none = await w.call("TaskStop", { task_id: "7" });
  assert.deepStrictEqual([none.is_error, textOf(none)], [
    true,
    'Tool "TaskStop" failed: Cannot stop job "7": no such job (you have no jobs)',
  ]);
  await w.call("Bash", { command: "exec sleep 300", run_in_background: true });
  const unknown = await w.call("TaskStop", { task_id: "bash_9" });
  assert.deepStrictEqual([unknown.is_error, textOf(unknown)], [
    true,
    'Tool "TaskStop" failed: Cannot stop job "bash_9": no such job (your jobs: 1 (running))',
  ]);
  const missing = await w.call("TaskStop", {});
  assert.deepStrictEqual([missing.is_error, textOf(missing)], [
    true,
    'Tool "TaskStop" failed: TaskStop needs a task_id (your running tasks: 1 (exec sleep 300))',
  ]);
  assert.equal(w.ctx.get(JobsKey).get("agent-1", "1")?.status, "running");
  // The deprecated shell_id still names a job.
  assert.equal((await w.call("TaskStop", { shell_id: "1" })).is_error, false);
});

Deno.test("an agent's disposal kills its jobs and leaves the notice in its session for its next rehydration", async () => {
  await using w = await world(manualClock(), { max_jobs: 2 });
  await w.call("Bash", { command: "exec sleep 300", run_in_background: true });
  await w.call("Bash", { command: "exec sleep 300", run_in_background: true });
  const cap = await w.call("Bash", { command: "exec sleep 300", run_in_background: true });
  assert.deepStrictEqual([cap.is_error, textOf(cap)], [
    true,
    'Tool "Bash" failed: Cannot start a job: 2 jobs are running, the limit is 2 (stop one with TaskStop)',
  ]);
  const pids = w.ctx.get(JobsKey).list("agent-1").map((job) => job.pid);
  w.ctx.emit(AgentDisposed, { agent_id: "agent-1", session_id: "s1", reason: "evicted" });
  await until("the jobs' ends", async () => (await jobEvents(w)).length === 6);
  for (const pid of pids) assert.deepStrictEqual(await liveInGroup(pid), []);
  assert.deepStrictEqual(w.ctx.get(JobsKey).list("agent-1"), []);
  const notices = (await jobEvents(w)).filter((event) => event.type === "input/queued")
    .map((event) => (event.payload as { content: string }).content).sort();
  const dir = w.ctx.get(JobsKey).dirOf("agent-1");
  assert.deepStrictEqual(notices, [
    `job 1 was killed after 0 s: its agent was evicted (command: exec sleep 300; output: ${dir}/1.log)`,
    `job 2 was killed after 0 s: its agent was evicted (command: exec sleep 300; output: ${dir}/2.log)`,
  ]);
});

Deno.test("a job that exits on its own takes the background processes it left in its group with it", async () => {
  await using w = await world();
  await w.call("Bash", { command: "sleep 300 & echo $!", run_in_background: true });
  await until("the job's end", () => w.ctx.get(JobsKey).get("agent-1", "1")?.status === "exited");
  const job = w.ctx.get(JobsKey).get("agent-1", "1")!;
  const grandchild = Number((await Deno.readTextFile(job.output_path)).trim());
  assert.ok(grandchild > 0);
  assert.deepStrictEqual([job.code, job.signal], [0, null]);
  assert.deepStrictEqual(await liveOf([grandchild]), []);
  assert.deepStrictEqual(await liveInGroup(job.pid), []);
});

Deno.test("pruning removes unlisted job output past retain_hours and keeps a listed job's file however old", async () => {
  // keep_ended 0: a job leaves the listing as soon as it ends.
  await using w = await world(manualClock(), { retain_hours: 24, keep_ended: 0 });
  const jobs = w.ctx.get(JobsKey);
  const root = dirname(jobs.dirOf("agent-1"));
  const gate = await fifo(w.dir);
  await w.call("Bash", { command: "echo one", run_in_background: true });
  await until("job 1's end", () => jobs.list("agent-1").length === 0);
  await w.call("Bash", { command: `cat ${shellWord(gate)}`, run_in_background: true });
  assert.deepStrictEqual(jobs.list("agent-1").map((job) => [job.id, job.status]), [[
    "2",
    "running",
  ]]);
  // Another agent's files, as a previous process or a disposed agent leaves them.
  await Deno.mkdir(`${root}/gone`);
  for (const name of ["7.log", "8.log", "notes.txt"]) {
    await Deno.writeTextFile(`${root}/gone/${name}`, "x\n");
  }
  const hoursAgo = (n: number) => new Date(Date.now() - n * 3_600_000);
  const age = async (path: string, hours: number) =>
    await Deno.utime(path, hoursAgo(hours), hoursAgo(hours));
  for (const path of [`${root}/agent-1/1.log`, `${root}/agent-1/2.log`, `${root}/gone/7.log`]) {
    await age(path, 30);
  }
  await age(`${root}/gone/8.log`, 23);
  await age(`${root}/gone/notes.txt`, 30);
  const files = async (dir: string) =>
    (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();
  // Job 1 ended and is no longer listed; job 2 runs (its file stays whatever its age); 8.log is recent; only .log
  // files are pruned.
  assert.equal(await jobs.prune(), 2);
  assert.deepStrictEqual(await files(`${root}/agent-1`), ["2.log"]);
  assert.deepStrictEqual(await files(`${root}/gone`), ["8.log", "notes.txt"]);
  await Deno.writeTextFile(gate, "go\n");
  await until("job 2's end", () => jobs.list("agent-1").length === 0);
  await age(`${root}/agent-1/2.log`, 30);
  assert.equal(await jobs.prune(), 1);
  assert.deepStrictEqual(await files(`${root}/agent-1`), []);
});

Deno.test("a kept jobs directory keeps recent output across restarts and drops files past retain_hours", async () => {
  const kept = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-jobs-kept-" }));
  try {
    await Deno.mkdir(`${kept}/agent-1`);
    await Deno.writeTextFile(`${kept}/agent-1/1.log`, "old\n");
    await Deno.writeTextFile(`${kept}/agent-1/2.log`, "recent\n");
    const hours = (n: number) => new Date(Date.now() - n * 3_600_000);
    await Deno.utime(`${kept}/agent-1/1.log`, hours(30), hours(30));
    await Deno.utime(`${kept}/agent-1/2.log`, hours(1), hours(1));
    await using w = await world(manualClock(), { path: kept, retain_hours: 24 });
    assert.deepStrictEqual(
      (await Array.fromAsync(Deno.readDir(`${kept}/agent-1`))).map((entry) => entry.name),
      ["2.log"],
    );
    assert.equal(
      textOf(await w.call("Read", { file_path: `${kept}/agent-1/2.log` })),
      "     1\trecent",
    );
    assert.equal(w.ctx.get(JobsKey).dirOf("agent-1"), `${kept}/agent-1`);
  } finally {
    await Deno.remove(kept, { recursive: true });
  }
});
