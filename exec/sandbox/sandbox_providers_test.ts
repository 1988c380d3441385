import assert from "node:assert/strict";
import { createMemoryLogger, TerretError } from "@terret/hames";
import type { ConfinementRequest, SandboxGrants } from "@terret/core/seams";
import { SubprocessRunner } from "../process/subprocess.ts";
import { buildSandbox } from "./sandbox_providers.ts";
import { createNoneSandbox } from "./none.ts";

const NO_GRANTS: SandboxGrants = { read: [], write: [], net: [], env: [], sys: [] };

async function workspace(): Promise<{ dir: string } & AsyncDisposable> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-confine-" }));
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function request(
  provider: string,
  dirs: readonly string[],
  grants: Partial<SandboxGrants> = {},
): ConfinementRequest {
  return { provider, owner: "mcp.gh", dirs, grants: { ...NO_GRANTS, ...grants } };
}

function rejectsWith(code: string, message: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof TerretError, String(error));
    assert.deepStrictEqual([error.code, error.message], [code, message]);
    return true;
  };
}

Deno.test("buildSandbox() derives exactly the deno flags of the grants: the workspace, the hosts, the row's env names", async () => {
  await using ws = await workspace();
  const sandbox = await buildSandbox(
    request("deno", [ws.dir], { net: ["api.github.com"], env: ["GITHUB_TOKEN"] }),
  );
  assert.deepStrictEqual([sandbox.name, sandbox.isolated], ["deno", false]);
  const wrapped = await sandbox.wrap(["deno", "run", "npm:@acme/gh-mcp@1.0.0", "stdio"], {
    cwd: ws.dir,
    env: { GITHUB_TOKEN: "t" },
  });
  assert.deepStrictEqual(wrapped.argv, [
    Deno.execPath(),
    "run",
    "--no-prompt",
    "--no-config",
    "--no-remote",
    `--allow-read=${ws.dir}`,
    `--allow-write=${ws.dir}`,
    "--allow-net=api.github.com",
    "--allow-env=GITHUB_TOKEN",
    "npm:@acme/gh-mcp@1.0.0",
    "stdio",
  ]);
  // Read and write grants beyond the workspace, and nothing else: no net, env, sys, run or ffi.
  const extra = await buildSandbox(
    request("deno", [ws.dir], { read: ["/srv/docs"], write: ["/srv/out"] }),
  );
  assert.deepStrictEqual(
    (await extra.wrap(["npm:pkg"], { cwd: ws.dir })).argv.slice(1, -1),
    [
      "run",
      "--no-prompt",
      "--no-config",
      "--no-remote",
      `--allow-read=${ws.dir},/srv/out,/srv/docs`,
      `--allow-write=${ws.dir},/srv/out`,
    ],
  );
  const bare = await buildSandbox(request("deno", [ws.dir]));
  assert.equal(bare.isolated, true);
});

Deno.test("buildSandbox() refuses what it cannot build, never falling back to another provider", async () => {
  await using ws = await workspace();
  await assert.rejects(
    buildSandbox(request("firejail", [ws.dir])),
    rejectsWith(
      "ConfigInvalid",
      'Cannot confine "mcp.gh" with the "firejail" sandbox: no such provider (known: "deno", "none", "docker", "bwrap")',
    ),
  );
  await assert.rejects(
    buildSandbox(request("docker", [ws.dir])),
    rejectsWith(
      "SandboxUnavailable",
      `Cannot confine "mcp.gh" with the "docker" sandbox: a row cannot have a docker container of its own; leave sandbox unset to run in the sandbox row's container`,
    ),
  );
  await assert.rejects(
    buildSandbox(request("none", [ws.dir], { net: ["example.com"] })),
    rejectsWith(
      "ConfigInvalid",
      'Cannot confine "mcp.gh" with the none sandbox: it grants everything, so "allow" means nothing there',
    ),
  );
  await assert.rejects(
    buildSandbox(request("deno", [ws.dir], { read: ["relative/dir"] })),
    rejectsWith(
      "SandboxUnavailable",
      'Cannot confine "mcp.gh" with the "deno" sandbox: Cannot grant "relative/dir" to Deno programs: the path is not absolute',
    ),
  );
  // A writable grant holding Deno's cache would let the server rewrite the code it and others run.
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--no-config"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const denoDir = (JSON.parse(new TextDecoder().decode(info.stdout)) as { denoDir: string })
    .denoDir;
  await assert.rejects(
    buildSandbox(request("deno", [ws.dir], { write: [denoDir] })),
    rejectsWith(
      "SandboxUnavailable",
      `Cannot confine "mcp.gh" with the "deno" sandbox: Cannot prepare the deno sandbox: Deno's cache "${denoDir}" is inside the writable grant "${denoDir}", where programs could rewrite it`,
    ),
  );
});

Deno.test("SubprocessRunner.confine() runs through the named provider, and stopping the runner stops its children", async () => {
  await using ws = await workspace();
  const outside = await Deno.makeTempFile({ prefix: "terret-confine-outside-" });
  const runner = new SubprocessRunner(
    createNoneSandbox([ws.dir]),
    { inherit_env: ["PATH", "HOME"], env: {}, max_output: 65536, kill_grace_ms: 200 },
    createMemoryLogger(),
  );
  try {
    const confined = await runner.confine(request("deno", [ws.dir]));
    const read = `console.log(Deno.readTextFileSync(${JSON.stringify(outside)}))`;
    const denied = await confined.run(["deno", "eval", read], { cwd: ws.dir });
    assert.deepStrictEqual(
      [denied.code, denied.stderr.includes(`NotCapable: Requires read access to "${outside}"`)],
      [1, true],
    );
    const unconfined = await runner.run([Deno.execPath(), "eval", read], {
      cwd: ws.dir,
      env: { NO_COLOR: "1" },
    });
    assert.deepStrictEqual([unconfined.code, unconfined.stdout], [0, "\n"]);

    const child = await confined.spawn(["deno", "eval", "await new Promise(() => {})"], {
      cwd: ws.dir,
    });
    await runner.shutdown();
    const exit = await child.status;
    assert.deepStrictEqual([exit.cancelled, exit.signal], [true, "SIGTERM"]);
    await assert.rejects(
      runner.confine(request("deno", [ws.dir])),
      rejectsWith("ServiceStopped", 'Cannot confine "mcp.gh": the subprocess service is stopped'),
    );
  } finally {
    await runner.shutdown();
    await Deno.remove(outside);
  }
});
