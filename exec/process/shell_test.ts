import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { AgentDisposed } from "@terret/core";
import { subprocessPlugin } from "./subprocess.ts";
import { ShellKey, shellPlugin, type ShellResult } from "./shell.ts";
import { ansiQuote, bashArgv } from "./_shell_session.ts";
import { truncationMarker } from "./_capture.ts";
import {
  liveInGroup,
  liveOf,
  mountWorld,
  recordingSandbox,
  until,
  type WrapCall,
} from "./_testing.ts";

function world(shell: Record<string, unknown> = {}) {
  return mountWorld({
    rows: [
      { id: "shell", plugin: shellPlugin, config: shell },
      // Bash's own messages are asserted word for word: in one locale, whatever the host's.
      {
        id: "subprocess",
        plugin: subprocessPlugin,
        config: { kill_grace_ms: 200, env: { LC_ALL: "C.UTF-8" } },
      },
    ],
  });
}

function ok(output: string, freshSession = false): ShellResult {
  return {
    output,
    truncated: 0,
    exitCode: 0,
    timedOut: false,
    cancelled: false,
    freshSession,
    sessionEnded: false,
  };
}

Deno.test("shell: cd and export persist between commands of one key, not across keys", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  await Deno.mkdir(`${w.dir}/sub`);
  assert.deepStrictEqual(await shell.run("a1", "cd sub && export FOO=bar"), ok("", true));
  assert.deepStrictEqual(await shell.run("a1", "pwd; echo $FOO"), ok(`${w.dir}/sub\nbar\n`));
  assert.deepStrictEqual(
    await shell.run("a2", "pwd; echo ${FOO:-unset}"),
    ok(`${w.dir}\nunset\n`, true),
  );
  assert.deepStrictEqual(shell.keys(), ["a1", "a2"]);
});

Deno.test("shell: exit statuses, quoting, multi-line scripts and output without a newline", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  assert.deepStrictEqual((await shell.run("a", "false")).exitCode, 1);
  assert.deepStrictEqual((await shell.run("a", "(exit 42)")).exitCode, 42);
  const script = [
    `printf '%s|' 'a\\tb' "it's" "wow!" 'ü€😀' $'\\x01'`,
    "cat <<'EOF'",
    "line 1",
    "  line 2",
    "EOF",
    "printf end",
  ].join("\n");
  assert.deepStrictEqual(
    await shell.run("a", script),
    ok("a\\tb|it's|wow!|ü€😀|\x01|line 1\n  line 2\nend"),
  );
  assert.deepStrictEqual(
    await shell.run("a", `echo ${"x".repeat(6000)} | wc -c`),
    ok("6001\n"),
  );
  assert.deepStrictEqual(await shell.run("b", "echo 'unclosed"), {
    ...ok("bash: eval: line 2: unexpected EOF while looking for matching `''\n"),
    freshSession: true,
    exitCode: 2,
  });
  assert.deepStrictEqual(await shell.run("b", "terret-no-such-command"), {
    ...ok("bash: line 3: terret-no-such-command: command not found\n"),
    exitCode: 127,
  });
  assert.deepStrictEqual(await shell.run("a", "echo still here"), ok("still here\n"));
});

Deno.test("shell: commands read /dev/null, never the protocol", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  assert.deepStrictEqual(await shell.run("a", "cat; read x; echo $?"), ok("1\n", true));
});

Deno.test("shell: a forged sentinel in the output does not end the command early", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  const forged = "0123456789abcdef0123456789abcdef";
  const result = await shell.run(
    "a",
    `printf '\\036TRT%s:0\\036\\036TRTREADY%s\\036' ${forged} ${forged}; sleep 0.2; echo after; exit 7`,
  );
  assert.deepStrictEqual(result, {
    output: `\x1eTRT${forged}:0\x1e\x1eTRTREADY${forged}\x1eafter\n`,
    truncated: 0,
    exitCode: 7,
    timedOut: false,
    cancelled: false,
    freshSession: true,
    sessionEnded: true,
  });
  assert.deepStrictEqual(shell.keys(), []);
  assert.deepStrictEqual((await shell.run("a", "echo again")).freshSession, true);
});

Deno.test("shell: a timed-out command kills its session's whole group and the next call gets a fresh one", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  const first = await shell.run("a", "export X=1; echo $$; sleep 300 & echo $!");
  const [bash, background] = first.output.trim().split("\n").map(Number);
  const timed = await shell.run("a", "echo started; sleep 300", { timeout: 300 });
  assert.deepStrictEqual(timed, {
    output: "started\n",
    truncated: 0,
    exitCode: null,
    timedOut: true,
    cancelled: false,
    freshSession: false,
    sessionEnded: true,
  });
  assert.deepStrictEqual(await liveInGroup(bash!), []);
  assert.deepStrictEqual(await liveOf([background!]), []);
  assert.deepStrictEqual(await shell.run("a", "echo ${X:-unset}"), ok("unset\n", true));
});

Deno.test("shell: an aborted signal cancels the command and its session", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  const pid = Number((await shell.run("a", "echo $$")).output);
  const controller = new AbortController();
  const running = shell.run("a", `touch "${w.dir}/started"; sleep 300`, {
    signal: controller.signal,
  });
  await until("the command to start", () => exists(`${w.dir}/started`));
  controller.abort();
  const result = await running;
  assert.deepStrictEqual(
    [result.cancelled, result.timedOut, result.exitCode, result.sessionEnded],
    [true, false, null, true],
  );
  assert.deepStrictEqual(await liveInGroup(pid), []);
  assert.deepStrictEqual((await shell.run("a", "true")).freshSession, true);
});

Deno.test("shell: output is capped by max_output, head and tail", async () => {
  await using w = await world({ max_output: 100 });
  const result = await w.ctx.get(ShellKey).run(
    "a",
    "printf '<'; head -c 100000 /dev/zero | tr '\\0' y; printf '>'",
  );
  assert.deepStrictEqual(
    [result.output, result.truncated, result.exitCode],
    [`<${"y".repeat(49)}${truncationMarker(99902)}${"y".repeat(49)}>`, 99902, 0],
  );
});

Deno.test("shell: commands of one key run one at a time in call order", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  const results = await Promise.all([
    shell.run("a", "sleep 0.1; X=first; echo 1"),
    shell.run("a", "echo 2 $X"),
  ]);
  assert.deepStrictEqual(results, [ok("1\n", true), ok("2 first\n")]);
});

Deno.test("shell: agent/disposed closes that agent's session only", async () => {
  await using w = await world();
  const shell = w.ctx.get(ShellKey);
  const pid = Number((await shell.run("agent-1", "echo $$")).output);
  await shell.run("agent-2", "true");
  w.ctx.emit(AgentDisposed, { agent_id: "agent-1", session_id: "s-1" });
  await shell.close("agent-1");
  assert.deepStrictEqual(shell.keys(), ["agent-2"]);
  assert.deepStrictEqual(await liveInGroup(pid), []);
});

Deno.test("shell: stopping the row kills running commands and refuses new ones", async () => {
  const w = await world();
  const shell = w.ctx.get(ShellKey);
  const pid = Number((await shell.run("a", "echo $$")).output);
  const running = shell.run("a", `touch "${w.dir}/started"; sleep 300`);
  await until("the command to start", () => exists(`${w.dir}/started`));
  await w.loader.fiber("shell")!.dispose();
  const result = await running;
  assert.deepStrictEqual([result.cancelled, result.sessionEnded], [true, true]);
  assert.deepStrictEqual(await liveInGroup(pid), []);
  await assert.rejects(
    shell.run("a", "true"),
    new TerretError("ServiceStopped", `Cannot run a command for "a": the shell service is stopped`),
  );
  await w[Symbol.asyncDispose]();
});

Deno.test("shell: bash starts through the sandbox with a terminal, in the workspace", async () => {
  const calls: WrapCall[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox(calls) },
    rows: [
      { id: "shell", plugin: shellPlugin, config: {} },
      { id: "subprocess", plugin: subprocessPlugin, config: {} },
    ],
  });
  const shell = w.ctx.get(ShellKey);
  assert.deepStrictEqual(await shell.run("a", "echo $SANDBOX_MARK"), ok("recorder\n", true));
  await assert.rejects(
    shell.run("b", "true", { cwd: "/" }),
    new TerretError("Denied", `Cannot run in "/"`),
  );
  assert.deepStrictEqual(calls, [
    { argv: bashArgv("bash"), cwd: w.dir, tty: true, columns: 200, rows: 50 },
    { argv: bashArgv("bash"), cwd: "/", tty: true, columns: 200, rows: 50 },
  ]);
});

Deno.test("ansiQuote() makes one line of any text", () => {
  assert.equal(ansiQuote("a'b\\c\nd\te\x7fü"), "$'a\\'b\\\\c\\x0ad\\x09e\\x7fü'");
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
