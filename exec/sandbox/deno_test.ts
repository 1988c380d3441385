import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { createContext, Loader, parseConfig, pluginPermissions, TerretError } from "@terret/hames";
import { SandboxKey, WorkspaceKey } from "@terret/core";
import { runSandboxConformance } from "../../tests/conformance/sandbox_provider.ts";
import { EXPECTED_ESCAPES, testEscapeBattery } from "../../tests/conformance/escape_battery.ts";
import { workspacePlugin } from "../workspace.ts";
import { DenoSandbox, denoSandboxPlugin } from "./deno.ts";

runSandboxConformance({
  name: "deno",
  language: "deno",
  create: (dirs) => ({
    sandbox: new DenoSandbox({ dirs, env: ["TERRET_PROBE"] }),
    dispose: () => Promise.resolve(),
  }),
  runningProcesses: 1,
  expected: {
    read_passwd: "contained",
    read_outside: "contained",
    write_outside: "contained",
    network: "contained",
    // Deno's permissions do not resolve links, so a workspace holding one that leads out is refused.
    symlink_out: "refused",
    dotdot: "contained",
    dangling_write: "refused",
    sibling_prefix: "contained",
    symlink_loop: "refused",
    cwd_outside: "refused",
    empty_workspace: "refused",
  },
});

interface Tree {
  root: string;
  ws: string;
  [Symbol.asyncDispose](): Promise<void>;
}

async function tree(): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-denosbx-" }));
  await Deno.mkdir(`${root}/ws`);
  await Deno.mkdir(`${root}/outside`);
  return {
    root,
    ws: `${root}/ws`,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function run(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  stdin = "",
) {
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    env: { ...env },
    clearEnv: true,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function deniedMessage(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TerretError, String(error));
    assert.equal(error.code, "Denied");
    return error.message;
  }
  assert.fail("expected Denied");
}

Deno.test("DenoSandbox derives the flags from the workspace and config", async () => {
  await using t = await tree();
  await Deno.writeTextFile(`${t.ws}/main.ts`, "");
  const sandbox = new DenoSandbox({
    dirs: [t.ws],
    net: ["127.0.0.1:8080"],
    env: ["FOO"],
    sys: ["hostname"],
  });
  assert.equal(sandbox.isolated, false);
  const wrapped = await sandbox.wrap(["deno", "run", "--quiet", "main.ts", "a", "b"], {
    cwd: t.ws,
    env: { FOO: "1" },
  });
  const bootstrap = wrapped.argv.at(-3)!;
  assert.deepStrictEqual(wrapped.argv, [
    Deno.execPath(),
    "run",
    "--no-prompt",
    "--no-config",
    "--no-remote",
    `--allow-read=${t.ws}`,
    `--allow-write=${t.ws}`,
    "--allow-net=127.0.0.1:8080",
    "--allow-env=FOO",
    "--allow-sys=hostname",
    "--quiet",
    bootstrap,
    "a",
    "b",
  ]);
  assert.equal(
    atob(bootstrap.replace("data:application/javascript;base64,", "")),
    `const entry = ["${pathToFileURL(`${t.ws}/main.ts`).href}"][0];\nawait import(entry);\n`,
  );
  assert.deepStrictEqual(Object.keys(wrapped.env).sort(), [
    "DENO_DIR",
    "DENO_NO_PACKAGE_JSON",
    "DENO_NO_UPDATE_CHECK",
    "FOO",
  ]);
  assert.equal(new DenoSandbox({ dirs: [t.ws] }).isolated, true);
  assert.equal(new DenoSandbox({ dirs: [t.ws], allowImport: ["deno.land"] }).isolated, false);
});

Deno.test("DenoSandbox refuses what it cannot contain", async () => {
  await using t = await tree();
  await Deno.writeTextFile(`${t.ws}/main.ts`, "");
  const sandbox = new DenoSandbox({ dirs: [t.ws], allowNpm: false });
  const messages = [
    await deniedMessage(sandbox.wrap(["bash", "-c", "cat /etc/passwd"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["deno", "run", "--allow-run", "main.ts"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["deno", "run", "-A", "main.ts"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["deno", "task", "x"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["https://example.com/x.ts"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["npm:cowsay"], { cwd: t.ws })),
    await deniedMessage(sandbox.wrap(["../outside/x.ts"], { cwd: t.ws })),
    await deniedMessage(
      sandbox.wrap(["main.ts"], { cwd: t.ws, env: { LD_PRELOAD: `${t.ws}/evil.so` } }),
    ),
    await deniedMessage(
      sandbox.wrap(["main.ts"], { cwd: t.ws, env: { DENO_PERMISSION_BROKER_PATH: "/tmp/s" } }),
    ),
  ];
  assert.deepStrictEqual(messages, [
    'Cannot run "bash -c cat /etc/passwd": the deno sandbox runs Deno programs only (a .ts/.js file, deno eval, or an npm: specifier)',
    'Cannot run "deno run --allow-run main.ts": the deno sandbox derives the flags itself and refuses "--allow-run"',
    'Cannot run "deno run -A main.ts": the deno sandbox derives the flags itself and refuses "-A"',
    'Cannot run "deno task x": the deno sandbox runs "deno run" and "deno eval" only, not "deno task"',
    'Cannot run "https://example.com/x.ts": the deno sandbox runs local files and npm: packages, not "https://example.com/x.ts"',
    'Cannot run "npm:cowsay": npm: entries are not allowed',
    `Cannot run "../outside/x.ts": outside the granted workspaces (it resolves to "${t.root}/outside/x.ts")`,
    'Cannot run "main.ts" in the deno sandbox: the environment variable "LD_PRELOAD" steers the runtime',
    'Cannot run "main.ts" in the deno sandbox: the environment variable "DENO_PERMISSION_BROKER_PATH" steers the runtime',
  ]);
  await Deno.symlink(`${t.root}/outside`, `${t.ws}/out`);
  assert.equal(
    await deniedMessage(sandbox.wrap(["main.ts"], { cwd: t.ws })),
    `Cannot run "main.ts" in the deno sandbox: the workspace holds a symbolic link that Deno's permissions cannot contain ("${t.ws}/out": it leads to "${t.root}/outside")`,
  );
  await Deno.remove(`${t.ws}/out`);
  await Deno.symlink("main.ts", `${t.ws}/inside-link.ts`);
  await sandbox.wrap(["main.ts"], { cwd: t.ws });
  const small = new DenoSandbox({ dirs: [t.ws], maxScanEntries: 1 });
  assert.equal(
    await deniedMessage(small.wrap(["main.ts"], { cwd: t.ws })),
    "Cannot grant the workspace to a Deno program: more than 1 entries to check for links leading out",
  );
});

Deno.test("a runtime variable that carries the host's own value is accepted; any other value is refused", async () => {
  await using t = await tree();
  const sandbox = new DenoSandbox({ dirs: [t.ws] });
  // A DENO_-prefixed name Deno itself does not read, so setting it on this process changes nothing else.
  Deno.env.set("DENO_TERRET_TEST_MARK", "host");
  try {
    const forwarded = await sandbox.wrap(["main.ts"], {
      cwd: t.ws,
      env: { DENO_TERRET_TEST_MARK: "host" },
    });
    assert.equal(forwarded.env.DENO_TERRET_TEST_MARK, "host");
    assert.equal(
      await deniedMessage(
        sandbox.wrap(["main.ts"], { cwd: t.ws, env: { DENO_TERRET_TEST_MARK: "program" } }),
      ),
      'Cannot run "main.ts" in the deno sandbox: the environment variable "DENO_TERRET_TEST_MARK" steers the runtime',
    );
  } finally {
    Deno.env.delete("DENO_TERRET_TEST_MARK");
  }
});

Deno.test("a Deno program's static imports are permission-checked through the bootstrap", async () => {
  await using t = await tree();
  await Deno.writeTextFile(`${t.root}/outside/secret.json`, '{"secret":"s3"}');
  await Deno.writeTextFile(
    `${t.ws}/static.ts`,
    `import s from "${t.root}/outside/secret.json" with { type: "json" };\nconsole.log(JSON.stringify(s));\n`,
  );
  await Deno.writeTextFile(`${t.ws}/passwd.ts`, 'import "/etc/passwd";\n');
  await Deno.writeTextFile(`${t.ws}/dynamic.ts`, 'await import("/etc/passwd");\n');
  await Deno.writeTextFile(`${t.ws}/lib.ts`, "export const x = 42;\n");
  await Deno.writeTextFile(
    `${t.ws}/ok.ts`,
    'import { x } from "./lib.ts";\nconsole.log(x, Deno.args.join(","));\n',
  );
  const sandbox = new DenoSandbox({ dirs: [t.ws] });
  const attempts = [];
  await Deno.writeTextFile(`${t.ws}/with space.ts`, 'console.log("spaced");\n');
  const spaced = await sandbox.wrap([pathToFileURL(`${t.ws}/with space.ts`).href], { cwd: t.ws });
  assert.deepStrictEqual((await run(spaced.argv, spaced.env, spaced.cwd)).stdout, "spaced\n");
  for (const argv of [["static.ts"], ["passwd.ts"], ["dynamic.ts"], ["ok.ts", "p", "q"]]) {
    const wrapped = await sandbox.wrap(argv, { cwd: t.ws });
    attempts.push(await run(wrapped.argv, wrapped.env, wrapped.cwd));
  }
  assert.deepStrictEqual(attempts.map((a) => [a.code, a.stdout]), [
    [1, ""],
    [1, ""],
    [1, ""],
    [0, "42 p,q\n"],
  ]);
  assert.match(attempts[0]!.stderr, /Requires read access to ".*\/outside\/secret.json"/);
  assert.match(attempts[1]!.stderr, /Requires read access to "\/etc\/passwd"/);
  assert.match(attempts[2]!.stderr, /Requires read access to "\/etc\/passwd"/);
  for (const attempt of attempts) {
    assert.doesNotMatch(attempt.stderr, /root:/, "no line of the file leaks through an error");
  }
  const evaluated = await sandbox.wrap(
    ["deno", "eval", "console.log(1 + 1, Deno.args[0])", "arg"],
    {
      cwd: t.ws,
    },
  );
  assert.deepStrictEqual(await run(evaluated.argv, evaluated.env, evaluated.cwd), {
    code: 0,
    stdout: "2 arg\n",
    stderr: "",
  });
});

Deno.test("DenoSandbox runs an npm: package's bin as the main module", async () => {
  await using t = await tree();
  // The yaml CLI (fetched from the npm registry when it is not cached) reads two env switches.
  const sandbox = new DenoSandbox({ dirs: [t.ws], env: ["LOG_TOKENS", "LOG_STREAM"] });
  const wrapped = await sandbox.wrap(["npm:yaml@2.9.1", "--json"], { cwd: t.ws });
  assert.deepStrictEqual(wrapped.argv.slice(-2), ["npm:yaml@2.9.1", "--json"]);
  assert.deepStrictEqual(await run(wrapped.argv, wrapped.env, wrapped.cwd, "a: 1\n"), {
    code: 0,
    stdout: '[{"a":1}]\n',
    stderr: "",
  });
  const offline = new DenoSandbox({ dirs: [t.ws], cachedOnly: true });
  const cached = await offline.wrap(["npm:yaml@2.9.1"], { cwd: t.ws });
  assert.equal(cached.argv.includes("--cached-only"), true);
});

Deno.test("the sandbox-deno row has no allow_run or allow_ffi to configure", async () => {
  await using t = await tree();
  await using ctx = createContext({ mode: "test" });
  await assert.rejects(
    new Loader(ctx).load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [t.ws] } },
      { id: "sandbox", plugin: denoSandboxPlugin, config: { allow_run: true } },
    ]),
    { code: "ConfigInvalid" },
  );
  await using ctx2 = createContext({ mode: "test" });
  await new Loader(ctx2).load([
    { id: "workspace", plugin: workspacePlugin, config: { dirs: [t.ws] } },
    { id: "sandbox", plugin: denoSandboxPlugin, config: { net: [] } },
  ]);
  const sandbox = ctx2.get(SandboxKey);
  assert.deepStrictEqual([sandbox.name, sandbox.isolated], ["deno", true]);
});

Deno.test("the sandbox-deno row asks to run its Deno, read the workspace and the cache's variables", () => {
  const grant = (config: unknown) =>
    pluginPermissions(denoSandboxPlugin, parseConfig(denoSandboxPlugin, config, "sandbox"), {
      provider: (key) =>
        key === WorkspaceKey ? { plugin: "workspace", config: { dirs: ["/srv/ws"] } } : undefined,
    });
  const env = [
    "HOME",
    "DENO_DIR",
    "XDG_CACHE_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "NPM_CONFIG_REGISTRY",
    "DENO_CERT",
  ];
  assert.deepStrictEqual(grant({}), { run: [Deno.execPath()], read: ["/srv/ws"], env });
  assert.deepStrictEqual(grant({ deno: "/opt/deno" }), {
    run: ["/opt/deno"],
    read: ["/srv/ws", "/opt/deno"],
    env,
  });
  assert.deepStrictEqual(grant({ deno: "deno" }), {
    run: ["deno"],
    read: true,
    env: [...env, "PATH"],
  });
});

testEscapeBattery({
  name: "deno",
  language: "deno",
  sandbox: { plugin: denoSandboxPlugin, config: {} },
  expected: EXPECTED_ESCAPES.deno,
});
