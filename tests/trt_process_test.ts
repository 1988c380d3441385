/**
 * `trt` as a real process: a user config error exits 2 with one line and no stack trace, and `serve` stops
 * gracefully on SIGTERM.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { writeTree } from "./fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));

Deno.test("a config error in a real trt process is one line on stderr and exit code 2", async () => {
  await using tree = await writeTree({ "bad.yml": "rows:\n  - id: llm.mian\n    config: {}\n" });
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "dump-config", "--home", tree.dir, "--patch", tree.path("bad.yml")],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(decoder.decode(output.stdout), "");
  assert.equal(
    decoder.decode(output.stderr),
    `trt dump-config: Cannot apply row "llm.mian" from --patch "${
      tree.path("bad.yml")
    }" line 2: no earlier layer has a row with this id (known: workspace, credentials, redaction, telemetry, sessions.store, sessions, llm, llm.main, fs, sandbox, subprocess, shell, terminals, jobs, tools, tools.std, tools.allow, prompt, agents, loop, subagents, subagents.acp, compaction, titles, approvals, interfaces.ws); to insert a new row, give it a plugin\n`,
  );
  assert.equal(output.code, 2);
});

Deno.test("a malformed permission rule is a boot error naming the file, the row and the key, exit 2", async () => {
  await using tree = await writeTree({
    "rules.yml":
      'rows:\n  - id: approvals\n    config:\n      allow: ["Bash(git status)", "Bash(git *)"]\n',
  });
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "serve", "--home", tree.dir, "--patch", tree.path("rules.yml")],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(decoder.decode(output.stdout), "");
  assert.equal(
    decoder.decode(output.stderr),
    `trt serve: Cannot configure row "approvals" (config set by --patch "${
      tree.path("rules.yml")
    }" line 4): config.allow.1: Cannot read permission rule "Bash(git *)": "*" is only allowed as a trailing ` +
      '":*" (a prefix rule such as "Bash(git log:*)")\n',
  );
  assert.equal(output.code, 2);
});

Deno.test("trt serve keeps running until SIGTERM, says it has no model key and why its sandbox cannot start, then disposes and exits 0", async () => {
  // A docker CLI that is not there, so the sandbox check says the same on every machine.
  await using tree = await writeTree({
    "patch.yml":
      "rows:\n  - id: sandbox\n    config: { image: terret/sandbox:test, docker: /nonexistent/docker }\n" +
      // Any free port, so the test never collides with a server on 7878.
      "  - id: interfaces.ws\n    config: { port: 0, token_env: TERRET_TOKEN, console: true }\n",
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "serve", "--home", tree.dir],
    cwd: ROOT,
    // No key, whatever the machine has: the host boots anyway and says so.
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "a-socket-token-from-the-env-0123" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  let out = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`serve did not come up: ${out}`)), 60_000);
  });
  try {
    while (!out.includes("running until SIGINT or SIGTERM\n")) {
      const { value, done } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  child.kill("SIGTERM");
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out += decoder.decode(value, { stream: true });
  }
  const [status, err] = await Promise.all([child.status, new Response(child.stderr).text()]);
  assert.equal(
    err,
    'trt serve: warning: llm: row "llm.main" has no API key: every model request for role "main" fails ' +
      "until OPENROUTER_API_KEY is set (or the row is given an api_key)\n" +
      'trt serve: error: sandbox: the docker sandbox cannot start on this machine: the docker CLI "/nonexistent/docker" is not installed. ' +
      "Every program an agent runs fails until it can (none runs unsandboxed): fix it, or patch row " +
      '"sandbox" with another provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} ' +
      "runs programs on the host, uncontained)\n",
  );
  assert.equal(status.code, 0);
  const port = /ws:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
  assert.deepStrictEqual(out.split("\n"), [
    'trt serve: booted profile "headless" (shipped template): 26 of 26 rows mounted (workspace, credentials, ' +
    "redaction, telemetry, sessions.store, sessions, llm, llm.main, fs, sandbox, subprocess, shell, terminals, jobs, tools, " +
    "tools.std, tools.allow, prompt, agents, loop, subagents, subagents.acp, compaction, titles, approvals, interfaces.ws)",
    "trt serve: serving through interfaces.ws",
    `trt serve: the WebSocket event stream is at ws://127.0.0.1:${port}/v1/agents/<agent_id>/stream (row interfaces.ws, docs/protocol.md)`,
    `trt serve: the web console is at http://127.0.0.1:${port}/ (sign in with a socket token; docs/console.md)`,
    "trt serve: clients authenticate with the token in $TERRET_TOKEN",
    "trt serve: running until SIGINT or SIGTERM",
    "trt serve: stopped",
    "",
  ]);
  // The session store is the SQLite file under the Terret home.
  assert.equal((await Deno.stat(`${tree.dir}/sessions/terret.db`)).isFile, true);
});
