import assert from "node:assert/strict";
import { mountTools, textOf } from "./_testing.ts";

Deno.test("Bash: output, a persistent session, exit codes as errors, no output", async () => {
  await using w = await mountTools();
  const bash = async (args: Record<string, unknown>) => {
    const result = await w.call("Bash", args);
    return [result.is_error, textOf(result)];
  };
  assert.deepStrictEqual(
    await bash({ command: "mkdir d && cd d && export V=7", description: "setup" }),
    [
      false,
      "(no output)",
    ],
  );
  assert.deepStrictEqual(await bash({ command: "pwd; echo $V; echo err >&2" }), [
    false,
    `${w.dir}/d\n7\nerr`,
  ]);
  assert.deepStrictEqual(await bash({ command: "echo partial; exit 3" }), [
    true,
    "partial\n\nExit code 3 (the shell exited; the next command starts a fresh session)",
  ]);
  assert.deepStrictEqual(await bash({ command: "false" }), [true, "(no output)\n\nExit code 1"]);
});

Deno.test("Bash: a timeout kills the command and resets the session; the cap and the refusals", async () => {
  await using w = await mountTools({
    std: { bash: { default_timeout_ms: 30_000, max_timeout_ms: 60_000 } },
  });
  await w.call("Bash", { command: "export KEEP=1" });
  const slow = await w.call("Bash", { command: "echo started; sleep 30", timeout: 300 });
  assert.deepStrictEqual([slow.is_error, textOf(slow)], [
    true,
    "started\n\nCommand timed out after 300 ms and was killed; the shell session restarted, so the working " +
    "directory and variables were reset",
  ]);
  assert.equal(textOf(await w.call("Bash", { command: "echo ${KEEP:-gone}" })), "gone");
  const over = await w.call("Bash", { command: "true", timeout: 60_001 });
  assert.deepStrictEqual(
    textOf(over),
    'Invalid arguments for tool "Bash": timeout: Too big: expected number to be <=60000. Call the tool again ' +
      "with arguments matching its schema.",
  );
  const background = await w.call("Bash", { command: "sleep 1", run_in_background: true });
  // Without a jobs row background work is unavailable, and says so.
  assert.deepStrictEqual([background.is_error, textOf(background)], [
    true,
    'Tool "Bash" failed: Bash with run_in_background is unavailable: the "jobs" service is not mounted in this ' +
    "harness",
  ]);
  const unsandbox = await w.call("Bash", { command: "id", dangerouslyDisableSandbox: true });
  assert.equal(
    textOf(unsandbox),
    'Tool "Bash" failed: dangerouslyDisableSandbox cannot be honoured: the sandbox is chosen by the harness\'s ' +
      "configuration",
  );
});

Deno.test("Bash: output over the registry cap is cut with the registry's marker", async () => {
  await using w = await mountTools({ maxOutputBytes: 2048 });
  const result = await w.call("Bash", { command: "head -c 100000 /dev/zero | tr '\\0' a" });
  const text = textOf(result);
  assert.equal(new TextEncoder().encode(text).length <= 2048, true);
  assert.match(
    text,
    /\n\n\[output truncated: showing the first \d+ of \d+ bytes; narrow the request to see the rest\]$/,
  );
});

Deno.test("terminal tools: open, input, read (with exit), close, and their errors", async () => {
  await using w = await mountTools();
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await w.call(name, args);
    return [result.is_error, textOf(result)];
  };
  const opened = await call("terminal_open", { name: "cat", command: "cat" });
  assert.match(opened[1] as string, /^Opened terminal "cat" \(pid \d+\): cat$/);
  assert.deepStrictEqual(await call("terminal_open", { name: "cat", command: "cat" }), [
    true,
    'Tool "terminal_open" failed: Cannot open terminal "cat": the name is taken',
  ]);
  assert.deepStrictEqual(
    await call("terminal_input", { name: "cat", text: "hello", enter: true }),
    [
      false,
      'Sent 6 characters to "cat"',
    ],
  );
  let seen = "";
  for (let i = 0; i < 50 && !seen.includes("hello\r\nhello"); i++) {
    seen += (await call("terminal_read", { name: "cat", wait_ms: 200 }))[1];
  }
  assert.match(seen, /hello\r\nhello/);
  assert.deepStrictEqual(await call("terminal_close", { name: "cat" }), [
    false,
    'Closed terminal "cat"',
  ]);
  assert.deepStrictEqual(await call("terminal_close", { name: "cat" }), [
    false,
    'No terminal named "cat" is open',
  ]);
  assert.deepStrictEqual(await call("terminal_read", { name: "cat" }), [
    true,
    'Tool "terminal_read" failed: Cannot find terminal "cat"',
  ]);
  await call("terminal_open", { name: "quick", command: "echo bye; exit 4" });
  let out = "";
  for (let i = 0; i < 50 && !out.includes("exited"); i++) {
    out += (await call("terminal_read", { name: "quick", wait_ms: 200 }))[1];
  }
  assert.match(out, /bye[\s\S]*\[the program exited with code 4\]$/);
  assert.deepStrictEqual(await call("terminal_input", { name: "quick", text: "x" }), [
    true,
    'Tool "terminal_input" failed: Cannot type into terminal "quick": its program has exited',
  ]);
  assert.deepStrictEqual(
    await call("terminal_open", { name: "out", command: "true", cwd: "/etc" }),
    [
      true,
      'Tool "terminal_open" failed: Cannot run in "/etc": outside the granted workspaces',
    ],
  );
});
