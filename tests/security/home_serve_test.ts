/**
 * Issue 17 items 4 and 6 through real `trt` processes: one `trt serve` per Terret home (an OS lock that dies with
 * the process, kill -9 included; read-only verbs do not need it), and a home created 0700 whose session database
 * files are 0600, with `trt doctor` warning when they are wider.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));
const PATCH =
  "rows:\n  - id: sandbox\n    config: { image: terret/sandbox:test, docker: /nonexistent/docker }\n" +
  "  - id: interfaces.ws\n    config: { port: 0, token_file: ws/token, dir: !setting terret.home }\n";

async function trt(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

const mode = async (path: string): Promise<string> =>
  ((await Deno.stat(path)).mode! & 0o777).toString(8);

Deno.test("a second trt serve on a served home refuses, naming the other process; read-only verbs still run; kill -9 frees the home", async () => {
  await using tree = await writeTree({ "patch.yml": PATCH });
  const home = tree.path("home");
  const first = await serve(home, [tree.path("patch.yml")]);
  let firstStopped = false;
  try {
    const second = await trt(["serve", "--home", home, "--patch", tree.path("patch.yml")]);
    assert.deepStrictEqual(second, {
      code: 1,
      stdout: "",
      stderr:
        `trt serve: Cannot serve the Terret home "${home}": another trt serve (process ${first.pid}) is ` +
        `serving it and holds its lock "${home}/serve.lock"; stop it first, or give this one another --home\n`,
    });
    // Read-only verbs do not take the lock.
    assert.equal(
      (await trt(["dump-config", "--home", home, "--patch", tree.path("patch.yml")])).code,
      0,
    );
    const doctor = await trt(["doctor", "--home", home, "--patch", tree.path("patch.yml")]);
    assert.equal(doctor.stdout.includes("serve.lock"), false);
    // kill -9: the kernel drops the lock with the process; the next serve starts on the same home.
    Deno.kill(first.pid, "SIGKILL");
    await first.stop().catch(() => {});
    firstStopped = true;
    const third = await serve(home, [tree.path("patch.yml")]);
    assert.equal((await third.stop()).code, 0);
  } finally {
    if (!firstStopped) await first.stop();
  }
});

Deno.test("trt serve creates the home 0700 and the session database files 0600; trt doctor warns on wider modes", async () => {
  await using tree = await writeTree({ "patch.yml": PATCH });
  const home = tree.path("fresh/home");
  const served = await serve(home, [tree.path("patch.yml")]);
  try {
    assert.deepStrictEqual(
      [
        await mode(home),
        await mode(`${home}/sessions`),
        await mode(`${home}/sessions/terret.db`),
        await mode(`${home}/sessions/terret.db-wal`),
        await mode(`${home}/sessions/terret.db-shm`),
        await mode(`${home}/ws/token`),
        await mode(`${home}/serve.lock`),
      ],
      ["700", "700", "600", "600", "600", "600", "600"],
    );
  } finally {
    assert.equal((await served.stop()).code, 0);
  }
  const clean = await trt(["doctor", "--home", home, "--patch", tree.path("patch.yml")]);
  assert.deepStrictEqual(clean.stdout.split("\n").filter((line) => line.includes(" home")), []);
  await Deno.chmod(home, 0o755);
  await Deno.chmod(`${home}/sessions/terret.db`, 0o644);
  const wide = await trt(["doctor", "--home", home, "--patch", tree.path("patch.yml")]);
  assert.deepStrictEqual(
    wide.stdout.split("\n").filter((line) => line.startsWith("warning home")),
    [
      `warning home: "${home}" has mode 0755: other users may list and enter it, and it holds session data or ` +
      `secrets (chmod 700 "${home}")`,
      `warning home: "${home}/sessions/terret.db" has mode 0644: other users may read it, and it holds session ` +
      `data or secrets (chmod 600 "${home}/sessions/terret.db")`,
    ],
  );
});
