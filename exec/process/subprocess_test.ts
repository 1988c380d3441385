import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { parseConfig, pluginPermissions, TerretError } from "@terret/hames";
import type { PtyHandle } from "@terret/core/seams";
import { SubprocessKey } from "@terret/core";
import { subprocessPlugin } from "./subprocess.ts";
import { shellPlugin } from "./shell.ts";
import { terminalsPlugin } from "./terminals.ts";
import { truncationMarker } from "./_capture.ts";
import {
  liveInGroup,
  liveOf,
  mountWorld,
  recordingSandbox,
  until,
  type WrapCall,
} from "./_testing.ts";

function world(config: Record<string, unknown> = {}) {
  return mountWorld({ rows: [{ id: "subprocess", plugin: subprocessPlugin, config }] });
}

function collect(pty: PtyHandle): { text: () => string } {
  let text = "";
  pty.onData((data) => text += data);
  return { text: () => text };
}

Deno.test("run() captures stdout, stderr and the exit code", async () => {
  await using w = await world();
  const result = await w.ctx.get(SubprocessKey).run(
    ["bash", "-c", "echo out; echo err >&2; pwd; exit 3"],
    { cwd: w.dir },
  );
  const { pid, ...rest } = result;
  assert.equal(typeof pid, "number");
  assert.deepStrictEqual(rest, {
    code: 3,
    signal: null,
    success: false,
    timedOut: false,
    cancelled: false,
    stdout: `out\n${w.dir}\n`,
    stderr: "err\n",
    truncated: { stdout: 0, stderr: 0 },
  });
});

Deno.test("run() writes stdin and closes it", async () => {
  await using w = await world();
  const result = await w.ctx.get(SubprocessKey).run(["wc", "-c"], {
    cwd: w.dir,
    stdin: "héllo\n",
  });
  assert.deepStrictEqual([result.stdout, result.code], ["7\n", 0]);
});

Deno.test("run() caps each stream, keeping its head and its tail", async () => {
  await using w = await world({ max_output: 64 });
  const subprocess = w.ctx.get(SubprocessKey);
  const result = await subprocess.run(
    [
      "bash",
      "-c",
      "printf 'HEAD'; head -c 100000 /dev/zero | tr '\\0' x; printf 'TAIL'; echo e >&2",
    ],
    { cwd: w.dir },
  );
  const kept = 32 - 4;
  assert.equal(
    result.stdout,
    `HEAD${"x".repeat(kept)}${truncationMarker(100008 - 64)}${"x".repeat(kept)}TAIL`,
  );
  assert.deepStrictEqual(result.truncated, { stdout: 100008 - 64, stderr: 0 });
  assert.equal(result.stderr, "e\n");
  const small = await subprocess.run(["printf", "%s", "é".repeat(10)], {
    cwd: w.dir,
    maxOutput: 5,
  });
  // 20 bytes, 3 kept at the head and 2 at the tail; the cut never splits a character.
  assert.equal(small.stdout, `é${truncationMarker(16)}é`);
  assert.deepStrictEqual(small.truncated, { stdout: 15, stderr: 0 });
});

Deno.test("run() passes only the allow-listed host environment, the row's and the call's", async () => {
  Deno.env.set("TERRET_TEST_SECRET", "s3cret");
  try {
    await using w = await world({ inherit_env: ["PATH", "TERRET_TEST_UNSET"], env: { A: "1" } });
    const result = await w.ctx.get(SubprocessKey).run(["/usr/bin/env"], {
      cwd: w.dir,
      env: { B: "2", A: "3" },
    });
    assert.deepStrictEqual(result.stdout.trim().split("\n").sort(), [
      "A=3",
      "B=2",
      `PATH=${Deno.env.get("PATH")}`,
    ]);
    await using defaults = await world();
    const probe = await defaults.ctx.get(SubprocessKey).run(["printenv", "TERRET_TEST_SECRET"], {
      cwd: defaults.dir,
    });
    assert.deepStrictEqual([probe.stdout, probe.code], ["", 1]);
  } finally {
    Deno.env.delete("TERRET_TEST_SECRET");
  }
});

Deno.test("a command that forks a background grandchild and then times out leaves no process behind", async () => {
  await using w = await world({ kill_grace_ms: 300 });
  // One grandchild ignores SIGTERM, so only the SIGKILL to the group ends it.
  const script = [
    "sleep 300 & echo $!",
    `sh -c 'trap "" TERM; exec sleep 300' & echo $!`,
    "wait",
  ].join("\n");
  const result = await w.ctx.get(SubprocessKey).run(["bash", "-c", script], {
    cwd: w.dir,
    timeout: 500,
  });
  const grandchildren = result.stdout.trim().split("\n").map(Number);
  assert.equal(grandchildren.length, 2);
  assert.deepStrictEqual(
    [result.timedOut, result.cancelled, result.signal, result.code],
    [true, false, "SIGTERM", 143],
  );
  assert.deepStrictEqual(await liveInGroup(result.pid), []);
  assert.deepStrictEqual(await liveOf(grandchildren), []);
});

Deno.test("a group leader that ignores SIGTERM is killed after the grace period", async () => {
  await using w = await world({ kill_grace_ms: 100 });
  // Cancelled once the trap is set (it writes a file then), not after a time the shell may not have reached it in.
  const stop = new AbortController();
  const running = w.ctx.get(SubprocessKey).run(
    ["bash", "-c", `trap "" TERM; echo ready; : > ready; sleep 300`],
    { cwd: w.dir, signal: stop.signal },
  );
  await until("the trap to be set", async () => {
    try {
      return (await Deno.stat(`${w.dir}/ready`)).isFile;
    } catch {
      return false;
    }
  });
  stop.abort();
  const result = await running;
  assert.deepStrictEqual(
    [result.cancelled, result.timedOut, result.signal, result.code, result.stdout],
    [true, false, "SIGKILL", 137, "ready\n"],
  );
  assert.deepStrictEqual(await liveInGroup(result.pid), []);
});

Deno.test("run() returns when the leader exits and kills what it left in its group", async () => {
  await using w = await world();
  const result = await w.ctx.get(SubprocessKey).run(["bash", "-c", "sleep 300 & echo $!"], {
    cwd: w.dir,
  });
  assert.deepStrictEqual([result.code, result.timedOut, result.cancelled], [0, false, false]);
  assert.deepStrictEqual(await liveOf([Number(result.stdout.trim())]), []);
  assert.deepStrictEqual(await liveInGroup(result.pid), []);
});

Deno.test("run() is cancelled by its signal", async () => {
  await using w = await world({ kill_grace_ms: 200 });
  const controller = new AbortController();
  const marker = `${w.dir}/started`;
  const running = w.ctx.get(SubprocessKey).run(
    ["bash", "-c", `touch "${marker}"; sleep 300`],
    { cwd: w.dir, signal: controller.signal },
  );
  await until("the command to start", () => exists(marker));
  controller.abort();
  const result = await running;
  assert.deepStrictEqual(
    [result.cancelled, result.timedOut, result.signal],
    [true, false, "SIGTERM"],
  );
  assert.deepStrictEqual(await liveInGroup(result.pid), []);
  const aborted = AbortSignal.abort(new Error("stop"));
  await assert.rejects(
    w.ctx.get(SubprocessKey).run(["true"], { cwd: w.dir, signal: aborted }),
    new Error("stop"),
  );
});

Deno.test("spawn() streams stdin and stdout and reports the exit", async () => {
  await using w = await world();
  const child = await w.ctx.get(SubprocessKey).spawn(["bash", "-c", "read l; echo got:$l; cat"], {
    cwd: w.dir,
  });
  const writer = child.stdin!.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  await writer.write(new TextEncoder().encode("ping\n"));
  assert.deepStrictEqual(await reader.read(), { done: false, value: "got:ping\n" });
  await writer.write(new TextEncoder().encode("pong\n"));
  assert.deepStrictEqual(await reader.read(), { done: false, value: "pong\n" });
  await writer.close();
  assert.deepStrictEqual(await reader.read(), { done: true, value: undefined });
  await child.stderr!.cancel();
  assert.deepStrictEqual(await child.status, {
    code: 0,
    signal: null,
    success: true,
    timedOut: false,
    cancelled: false,
  });
});

Deno.test("spawn() kill() and timeout stop the whole group", async () => {
  await using w = await world({ kill_grace_ms: 200 });
  const subprocess = w.ctx.get(SubprocessKey);
  const child = await subprocess.spawn(["bash", "-c", "sleep 300 & echo $!; wait"], {
    cwd: w.dir,
    stdin: "null",
    stderr: "null",
  });
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const grandchild = Number((await reader.read()).value!.trim());
  const exit = await child.kill();
  assert.deepStrictEqual(exit, {
    code: 143,
    signal: "SIGTERM",
    success: false,
    timedOut: false,
    cancelled: true,
  });
  assert.deepStrictEqual(await child.kill(), exit);
  assert.deepStrictEqual(await reader.read(), { done: true, value: undefined });
  assert.deepStrictEqual(await liveOf([grandchild]), []);

  const timed = await subprocess.spawn(["sleep", "300"], {
    cwd: w.dir,
    timeout: 200,
    stdin: "null",
    stderr: "null",
  });
  await timed.stdout.cancel();
  assert.deepStrictEqual(
    [(await timed.status).timedOut, (await timed.status).signal],
    [true, "SIGTERM"],
  );
});

Deno.test("ptySpawn() streams output, takes input, resizes and reports the exit", async () => {
  await using w = await world();
  const pty = await w.ctx.get(SubprocessKey).ptySpawn(
    ["bash", "-c", "stty size; read line; stty size; echo got:$line; exit 3"],
    { cwd: w.dir, cols: 80, rows: 24 },
  );
  const out = collect(pty);
  await until("the first size", () => out.text() === "24 80\r\n");
  pty.resize(100, 30);
  pty.write("hello\r");
  assert.deepStrictEqual(await pty.exited, { code: 3, signal: null, success: false });
  assert.equal(out.text(), "24 80\r\nhello\r\n30 100\r\ngot:hello\r\n");
  pty.write("ignored after exit\r");
  pty.resize(10, 10);
});

Deno.test("ptySpawn() reports the program's own status when it closes its terminal before it exits", async () => {
  // Every program closes its terminal on the way out; this one lingers a second after that. Were the master
  // closed as soon as its read failed (EIO), the kernel would hang the terminal up and SIGHUP the program (code
  // 129). The linger only widens that window; the expected status does not depend on it.
  await using w = await world();
  const pty = await w.ctx.get(SubprocessKey).ptySpawn(
    ["bash", "-c", "echo closing; exec 0<&- 1>&- 2>&-; sleep 1; exit 3"],
    { cwd: w.dir },
  );
  const out = collect(pty);
  assert.deepStrictEqual(await pty.exited, { code: 3, signal: null, success: false });
  assert.equal(out.text(), "closing\r\n");
});

Deno.test("ptySpawn() kill() stops the terminal's whole process group", async () => {
  await using w = await world({ kill_grace_ms: 200 });
  const pty = await w.ctx.get(SubprocessKey).ptySpawn(
    ["bash", "-c", "sleep 300 & echo bg:$!; sleep 300"],
    { cwd: w.dir },
  );
  const out = collect(pty);
  await until("the background pid", () => /bg:\d+\r\n/.test(out.text()));
  const grandchild = Number(/bg:(\d+)/.exec(out.text())![1]);
  const exit = await pty.kill();
  assert.deepStrictEqual(exit, { code: 129, signal: "SIGHUP", success: false });
  assert.deepStrictEqual(await liveOf([grandchild]), []);
  assert.deepStrictEqual(await liveInGroup(pty.pid), []);
});

Deno.test("every spawn goes through sandbox.wrap, and only the wrapped command runs", async () => {
  const calls: WrapCall[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox(calls) },
    rows: [{ id: "subprocess", plugin: subprocessPlugin, config: {} }],
  });
  const subprocess = w.ctx.get(SubprocessKey);
  const ran = await subprocess.run(["printenv", "SANDBOX_MARK"], { cwd: w.dir });
  const child = await subprocess.spawn(["printenv", "SANDBOX_MARK"], { cwd: w.dir });
  const spawned = await child.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  await child.stderr!.cancel();
  await child.status;
  const pty = await subprocess.ptySpawn(["printenv", "SANDBOX_MARK"], { cwd: w.dir });
  const out = collect(pty);
  await pty.exited;
  await assert.rejects(
    subprocess.run(["true"], { cwd: "/" }),
    new TerretError("Denied", `Cannot run in "/"`),
  );
  assert.deepStrictEqual([ran.stdout, spawned.value, out.text()], [
    "recorder\n",
    "recorder\n",
    "recorder\r\n",
  ]);
  assert.deepStrictEqual(calls, [
    { argv: ["printenv", "SANDBOX_MARK"], cwd: w.dir, tty: false },
    { argv: ["printenv", "SANDBOX_MARK"], cwd: w.dir, tty: false },
    { argv: ["printenv", "SANDBOX_MARK"], cwd: w.dir, tty: true, columns: 80, rows: 24 },
    { argv: ["true"], cwd: "/", tty: false },
  ]);
});

Deno.test("children get exactly the wrapped environment, and a pty its size through wrap", async () => {
  const calls: WrapCall[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox(calls) },
    rows: [{
      id: "subprocess",
      plugin: subprocessPlugin,
      config: { inherit_env: ["PATH"], env: { FIXED: "1" } },
    }],
  });
  const subprocess = w.ctx.get(SubprocessKey);
  Deno.env.set("TERRET_HOST_CANARY", "leaked");
  try {
    const env = { CALLER: "2", DROPPED_BY_SANDBOX: "3" };
    const ran = await subprocess.run(["env"], { cwd: w.dir, env });
    const pty = await subprocess.ptySpawn(["env"], { cwd: w.dir, env, cols: 91, rows: 33 });
    const out = collect(pty);
    await pty.exited;
    const names = (text: string) =>
      text.split(/\r?\n/).filter((line) => line !== "").map((line) => line.split("=")[0]).sort();
    const common = ["CALLER", "FIXED", "PATH", "SANDBOX_ENV", "SANDBOX_MARK"];
    assert.deepStrictEqual(names(ran.stdout), common);
    // node-pty adds PWD (the cwd) and TERM (the terminal type) to the environment it is given.
    assert.deepStrictEqual(names(out.text()), [...common, "PWD", "TERM"].sort());
    assert.deepStrictEqual(calls.map(({ tty, columns, rows }) => ({ tty, columns, rows })), [
      { tty: false, columns: undefined, rows: undefined },
      { tty: true, columns: 91, rows: 33 },
    ]);
  } finally {
    Deno.env.delete("TERRET_HOST_CANARY");
  }
});

Deno.test("killing a group also calls the wrapped command's signal hook, SIGTERM then SIGKILL", async () => {
  const hooked: string[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox([], hooked) },
    rows: [{ id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 100 } }],
  });
  const subprocess = w.ctx.get(SubprocessKey);
  const natural = await subprocess.run(["true"], { cwd: w.dir });
  assert.deepStrictEqual([natural.code, hooked], [0, []]);
  const timed = await subprocess.run(["sleep", "300"], { cwd: w.dir, timeout: 100 });
  const pty = await subprocess.ptySpawn(["sleep", "301"], { cwd: w.dir });
  await pty.kill();
  assert.deepStrictEqual([timed.timedOut, hooked], [true, [
    "sleep:SIGTERM",
    "sleep:SIGKILL",
    "sleep:SIGTERM",
    "sleep:SIGKILL",
  ]]);
});

Deno.test("killing a handle whose program already exited signals nothing (its pgid may be recycled)", async () => {
  const hooked: string[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox([], hooked) },
    rows: [{ id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 100 } }],
  });
  const subprocess = w.ctx.get(SubprocessKey);
  const pty = await subprocess.ptySpawn(["true"], { cwd: w.dir });
  assert.deepStrictEqual(await pty.exited, { code: 0, signal: null, success: true });
  const piped = await subprocess.spawn(["true"], { cwd: w.dir, stdin: "null", stderr: "null" });
  await piped.stdout.cancel();
  const status = await piped.status;
  // A kill that would have signalled -pgid (and the sandbox hook) now finds nothing of its own to signal.
  assert.deepStrictEqual(await pty.kill(), { code: 0, signal: null, success: true });
  assert.deepStrictEqual(await piped.kill(), status);
  assert.deepStrictEqual([status.code, status.cancelled, hooked], [0, false, []]);
});

Deno.test("a program that cannot be started rejects with SpawnFailed, piped or on a pty", async () => {
  await using w = await world();
  const subprocess = w.ctx.get(SubprocessKey);
  await assert.rejects(
    subprocess.run(["terret-no-such-program"], { cwd: w.dir }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "SpawnFailed" &&
      error.message.startsWith(`Cannot spawn "terret-no-such-program": `),
  );
  await assert.rejects(
    subprocess.ptySpawn(["terret-no-such-program"], { cwd: w.dir }),
    new TerretError(
      "SpawnFailed",
      `Cannot spawn "terret-no-such-program": "terret-no-such-program" is not an executable file on PATH`,
    ),
  );
});

Deno.test("disposing the row kills every running group and refuses new work", async () => {
  const w = await world({ kill_grace_ms: 200 });
  const subprocess = w.ctx.get(SubprocessKey);
  const marker = `${w.dir}/started`;
  const running = subprocess.run(["bash", "-c", `touch "${marker}"; sleep 300`], { cwd: w.dir });
  const pty = await subprocess.ptySpawn(["sleep", "300"], { cwd: w.dir });
  await until("the command to start", () => exists(marker));
  await w.loader.fiber("subprocess")!.dispose();
  const result = await running;
  assert.deepStrictEqual([result.cancelled, result.signal], [true, "SIGTERM"]);
  assert.equal((await pty.exited).success, false);
  assert.deepStrictEqual(await liveInGroup(result.pid), []);
  assert.deepStrictEqual(await liveInGroup(pty.pid), []);
  await assert.rejects(
    subprocess.run(["true"], { cwd: w.dir }),
    new TerretError("ServiceStopped", `Cannot spawn "true": the subprocess service is stopped`),
  );
  await w[Symbol.asyncDispose]();
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("the process rows ask for what node-pty and process groups need: ffi scoped, the rest unscoped", () => {
  const addon = import.meta.resolve("@lydell/node-pty");
  const scope = fileURLToPath(new URL(addon)).replace(/\/@lydell\/.*$/, "/@lydell");
  const pty = { ffi: [scope], read: true, write: true, run: true };
  assert.deepStrictEqual(
    pluginPermissions(
      subprocessPlugin,
      parseConfig(subprocessPlugin, { inherit_env: ["PATH", "LANG"] }, "subprocess"),
    ),
    { ...pty, env: ["PATH", "LANG"] },
  );
  assert.deepStrictEqual(
    pluginPermissions(shellPlugin, parseConfig(shellPlugin, {}, "shell")),
    pty,
  );
  assert.deepStrictEqual(
    pluginPermissions(terminalsPlugin, parseConfig(terminalsPlugin, {}, "terminals")),
    pty,
  );
});
