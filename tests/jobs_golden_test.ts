/**
 * Background jobs in a running agent (issue 24 §3): the golden durable-event sequence of a job whose end is noticed
 * at the agent's next step, twenty jobs streaming while a turn runs, and jobs a previous process left unfinished
 * reported as lost. Each drives a real agent stack (scripted model) over the real execution rows (workspace, fs,
 * the `none` sandbox, subprocess, shell, jobs, the standard tools). Regenerate the golden file after an intended
 * change with `UPDATE_GOLDEN=1 deno test -A tests/jobs_golden_test.ts`.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { definePlugin, type PluginLike } from "@terret/hames";
import { AgentClockKey } from "@terret/core/agents";
import {
  type AgentStack,
  createAgentStack,
  eventShapes,
  type ScriptedAdapter,
  scriptedAdapter,
  scriptedTool,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { fsPlugin, workspacePlugin } from "@terret/exec/fs";
import { noneSandboxPlugin } from "@terret/exec/sandbox";
import { JobsKey, jobsPlugin, shellPlugin, subprocessPlugin } from "@terret/exec/process";
import { stdToolsPlugin } from "@terret/exec/tools";
import { assertGolden } from "./fixtures/golden.ts";
import { until } from "../exec/process/_testing.ts";
import { shellWord } from "./shell_words.ts";

interface Clock {
  ms: number;
}

function execRows(dir: string, clock: Clock, jobs: Record<string, unknown> = {}) {
  const clockPlugin: PluginLike = definePlugin({
    name: "manual-clock",
    provides: [AgentClockKey],
    apply(ctx) {
      ctx.provide(AgentClockKey, { now: () => clock.ms });
    },
  });
  return [
    { id: "agents.clock", plugin: clockPlugin },
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
    { id: "fs", plugin: fsPlugin },
    { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
    { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 200 } },
    { id: "shell", plugin: shellPlugin },
    { id: "jobs", plugin: jobsPlugin, config: { report_lost: false, ...jobs } },
    { id: "tools.std", plugin: stdToolsPlugin },
  ];
}

async function stackOver(
  dir: string,
  clock: Clock,
  adapter: ScriptedAdapter,
  options: { jobs?: Record<string, unknown>; sqlitePath?: string } = {},
): Promise<AgentStack> {
  return await createAgentStack({
    adapter,
    allow: ["Bash", "Read", "TaskStop", "wait"],
    approvals: { allow: ["Bash"], always_can_be_ruled: true },
    ...(options.sqlitePath === undefined ? {} : { sqlitePath: options.sqlitePath }),
    rows: execRows(dir, clock, options.jobs),
  });
}

async function tempDir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-jobs-golden-" }));
}

Deno.test("golden: a job's completion notice arrives at the agent's next step as context/injected", async () => {
  const dir = await tempDir();
  try {
    const gate = `${dir}/gate.fifo`;
    assert.equal((await new Deno.Command("mkfifo", { args: [gate] }).output()).code, 0);
    const command = `echo started; cat ${shellWord(gate)} > /dev/null; echo done`;
    const adapter = scriptedAdapter([
      toolCallsReply([{ id: "c1", name: "Bash", args: { command, run_in_background: true } }]),
      toolCallsReply([{ id: "c2", name: "wait", args: {} }]),
      textReply("The build finished."),
    ]);
    const clock = { ms: 1_000 };
    await using stack = await stackOver(dir, clock, adapter);
    const wait = scriptedTool("wait", { held: true });
    stack.tools.register(stack.ctx, wait.definition);
    const agent = await stack.agents.ensure("jobber");
    agent.send("Start the build in the background, then wait.");
    await wait.started(1);
    // The job runs on past the step that started it; it ends (41 s later on the clock) while `wait` holds step 2.
    clock.ms = 42_000;
    await Deno.writeTextFile(gate, "go\n");
    await until("the notice to be queued", () => agent.queued === 1);
    wait.release();
    await agent.idle();
    const root = stack.ctx.get(JobsKey).dirOf("jobber");
    const shapes = JSON.parse(
      JSON.stringify(eventShapes(await stack.sessions.read("jobber")))
        .replaceAll(root, "<jobs>")
        .replaceAll(dir, "<workspace>"),
    );
    await assertGolden("jobs/completion_notice", shapes);
    // The third request carries the notice, after the held step's result.
    const notice = `job 1 exited 0 after 41 s (command: ${command}; output: ${root}/1.log)`;
    const third = adapter.requests[2]!.messages;
    assert.deepStrictEqual(third.at(-1), { role: "user", parts: [{ type: "text", text: notice }] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("twenty jobs stream output while a turn runs: every step proceeds and the files stay capped", async () => {
  const dir = await tempDir();
  try {
    // Each job prints ten lines a second forever, sleeping with bash's own `read -t` (no fork per line).
    const loop = (n: number) =>
      `exec 3<> <(:); i=0; while :; do i=$((i+1)); echo "job ${n} line $i"; read -t 0.1 -u 3 || :; done`;
    const calls = Array.from({ length: 20 }, (_, i) => ({
      id: `c${i + 1}`,
      name: "Bash",
      args: { command: loop(i + 1), run_in_background: true },
    }));
    const adapter = scriptedAdapter([
      toolCallsReply(calls),
      toolCallsReply([{ id: "w1", name: "wait", args: {} }]),
      textReply("All twenty are running."),
    ]);
    await using stack = await stackOver(dir, { ms: 0 }, adapter, {
      jobs: { max_jobs: 20, max_output_bytes: 256 },
    });
    const wait = scriptedTool("wait", { held: true });
    stack.tools.register(stack.ctx, wait.definition);
    const agent = await stack.agents.ensure("streamer");
    agent.send("Start twenty watchers.");
    await wait.started(1);
    const jobs = stack.ctx.get(JobsKey);
    assert.deepStrictEqual(
      jobs.list("streamer").map((job) => [job.id, job.status]),
      Array.from({ length: 20 }, (_, i) => [String(i + 1), "running"]),
    );
    // While step 2 is held, every job keeps writing: each file passes its cap and is rotated.
    const texts = () =>
      Promise.all(jobs.list("streamer").map((job) => Deno.readTextFile(job.output_path)));
    await until(
      "every job's file to be rotated",
      async () => (await texts()).every((text) => text.startsWith("[… ")),
    );
    wait.release();
    await agent.idle();
    const events = await stack.sessions.read("streamer");
    assert.deepStrictEqual(
      events.filter((event) => event.type === "step/end" || event.type === "turn/end")
        .map((event) => [event.type, (event.payload as { step?: number }).step ?? null]),
      [["step/end", 1], ["step/end", 2], ["step/end", 3], ["turn/end", null]],
    );
    assert.equal(events.filter((event) => event.type === "job/started").length, 20);
    // The turn ended; the jobs did not.
    assert.deepStrictEqual(
      jobs.list("streamer").map((job) => job.status),
      Array.from({ length: 20 }, () => "running"),
    );
    for (const [i, text] of (await texts()).entries()) {
      const lines = text.split("\n");
      assert.match(lines[0]!, /^\[… \d+ bytes dropped …\]$/);
      assert.ok(
        new TextEncoder().encode(text).length <= 256,
        `job ${i + 1}'s file is over its cap`,
      );
      assert.match(lines.at(-2)!, new RegExp(`^job ${i + 1} line \\d+$`));
    }
    const pids = jobs.list("streamer").map((job) => job.pid);
    await stack.agents.disposeAgent("streamer");
    await until("every job to be killed", () => jobs.list("streamer").length === 0);
    for (const pid of pids) {
      await until(`job group ${pid} to be gone`, () => {
        try {
          Deno.kill(-pid, "SIGCONT");
          return false;
        } catch {
          return true;
        }
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a job a previous process left unfinished is reported lost, and the agent is told at its next step", async () => {
  const dir = await tempDir();
  const sqlitePath = `${dir}/sessions.db`;
  try {
    {
      // The log a process that died with a job running leaves: `job/started` and no `job/ended`.
      await using before = await stackOver(dir, { ms: 0 }, scriptedAdapter([]), { sqlitePath });
      await before.agents.ensure("survivor");
      await before.sessions.append("survivor", {
        type: "job/started",
        payload: { job_id: "4", command: "npm run dev", output_path: `${dir}/4.log` },
      });
    }
    const adapter = scriptedAdapter([textReply("I will restart it.")]);
    await using after = await createAgentStack({
      adapter,
      allow: [],
      sqlitePath,
      rows: execRows(dir, { ms: 0 }, { report_lost: true }),
    });
    await until("the lost job's report", async () => (await after.sessions.head("survivor")) === 4);
    const agent = await after.agents.ensure("survivor");
    agent.send("Is the dev server up?");
    await agent.idle();
    const notice =
      `job 4 was lost when the host restarted (command: npm run dev; its output so far, if any, is ` +
      `in ${dir}/4.log)`;
    assert.deepStrictEqual(
      eventShapes(await after.sessions.read("survivor", { from_seq: 2 })).map((
        { type, payload },
      ) => ({
        type,
        payload,
      })),
      [
        {
          type: "job/started",
          payload: { job_id: "4", command: "npm run dev", output_path: `${dir}/4.log` },
        },
        {
          type: "job/ended",
          payload: { job_id: "4", reason: "lost", code: null, signal: null, duration_ms: null },
        },
        { type: "input/queued", payload: { kind: "steer", content: notice, wake: false } },
        { type: "turn/start", payload: { agent_id: "survivor" } },
        { type: "step/start", payload: { step: 1 } },
        { type: "context/injected", payload: { content: notice, queued_seq: 4 } },
        { type: "user/message", payload: { content: "Is the dev server up?" } },
        { type: "assistant/chunk", payload: { kind: "text", text: "I will restart it." } },
        {
          type: "assistant/message",
          payload: { parts: [{ type: "text", text: "I will restart it." }] },
        },
        {
          type: "step/end",
          payload: {
            step: 1,
            usage: { input_tokens: 10, output_tokens: 5 },
            finish_reason: "stop",
          },
        },
        { type: "turn/end", payload: { status: "completed" } },
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a host killed with a job running: the next host reports the job lost (the orphan is not reached)", async () => {
  const dir = await tempDir();
  const sqlitePath = `${dir}/sessions.db`;
  try {
    const host = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        fileURLToPath(new URL("./fixtures/jobs/crashing_host.ts", import.meta.url)),
        sqlitePath,
        dir,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = host.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      line += value;
    }
    // "ready <pid> <output path>": the path is the rest of the line (it may hold spaces).
    const [word, pidText, ...pathWords] = line.trim().split(" ");
    const output = pathWords.join(" ");
    assert.equal(word, "ready");
    const pid = Number(pidText);
    host.kill("SIGKILL");
    assert.equal((await host.status).signal, "SIGKILL");
    await reader.cancel();
    // The job's group was detached: it outlives the host that started it (documented), so the test ends it.
    Deno.kill(-pid, "SIGKILL");
    await using after = await createAgentStack({
      adapter: scriptedAdapter([]),
      allow: [],
      sqlitePath,
      rows: execRows(dir, { ms: 0 }, { report_lost: true, path: `${dir}/jobs` }),
    });
    await until("the lost job's report", async () => (await after.sessions.head("crashed")) === 4);
    assert.deepStrictEqual(
      eventShapes(await after.sessions.read("crashed")).map(({ type, payload }) => ({
        type,
        payload,
      })),
      [
        { type: "session/created", payload: { meta: { agent_id: "crashed" } } },
        {
          type: "job/started",
          payload: { job_id: "1", command: "echo up; exec sleep 300", output_path: output },
        },
        {
          type: "job/ended",
          payload: { job_id: "1", reason: "lost", code: null, signal: null, duration_ms: null },
        },
        {
          type: "input/queued",
          payload: {
            kind: "steer",
            content:
              `job 1 was lost when the host restarted (command: echo up; exec sleep 300; its output so ` +
              `far, if any, is in ${output})`,
            wake: false,
          },
        },
      ],
    );
    assert.equal(await Deno.readTextFile(output), "up\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an evicted agent's jobs are killed, and the agent is told when it is next rehydrated", async () => {
  const dir = await tempDir();
  try {
    const adapter = scriptedAdapter([
      toolCallsReply([{
        id: "c1",
        name: "Bash",
        args: { command: "exec sleep 300", run_in_background: true },
      }]),
      textReply("Started."),
      textReply("Noted."),
    ]);
    await using stack = await createAgentStack({
      adapter,
      allow: ["Bash"],
      approvals: { allow: ["Bash"], always_can_be_ruled: true },
      maxAgents: 1,
      rows: execRows(dir, { ms: 0 }),
    });
    const first = await stack.agents.ensure("evictee");
    first.send("Start a server.");
    await first.idle();
    const job = stack.ctx.get(JobsKey).get("evictee", "1")!;
    assert.equal(job.status, "running");
    // The cap is one resident agent: making another resident evicts the idle first one.
    await stack.agents.ensure("newcomer");
    await until(
      "the eviction's notice",
      async () => (await stack.sessions.read("evictee", { types: ["input/queued"] })).length === 1,
    );
    await until(`job group ${job.pid} to be gone`, () => {
      try {
        Deno.kill(-job.pid, "SIGCONT");
        return false;
      } catch {
        return true;
      }
    });
    assert.deepStrictEqual(stack.ctx.get(JobsKey).list("evictee"), []);
    const again = await stack.agents.ensure("evictee");
    again.send("Is it still up?");
    await again.idle();
    const root = stack.ctx.get(JobsKey).dirOf("evictee");
    const notice =
      `job 1 was killed after 0 s: its agent was evicted (command: exec sleep 300; output: ${root}/1.log)`;
    const queued = await stack.sessions.read("evictee", { types: ["input/queued"] });
    const tail = (await stack.sessions.read("evictee")).map(({ type, payload }) => ({
      type,
      payload,
    }))
      .filter((event) =>
        ["job/ended", "input/queued", "context/injected", "user/message"].includes(event.type)
      );
    assert.deepStrictEqual(tail, [
      { type: "user/message", payload: { content: "Start a server." } },
      {
        type: "job/ended",
        payload: {
          job_id: "1",
          reason: "killed",
          code: 143,
          signal: "SIGTERM",
          duration_ms: 0,
          output_bytes: 0,
          dropped_bytes: 0,
        },
      },
      { type: "input/queued", payload: { kind: "steer", content: notice, wake: false } },
      {
        type: "context/injected",
        payload: { content: notice, queued_seq: queued[0]!.seq },
      },
      { type: "user/message", payload: { content: "Is it still up?" } },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
