import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseConfig, pluginPermissions } from "@terret/hames";
import { shellPlugin } from "@terret/exec";
import { runTrt, type TrtIo } from "./mod.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const GREETINGS = fileURLToPath(
  new URL("../../tests/fixtures/composition/bundles/greetings.yml", import.meta.url),
);
const FIXTURE_BUNDLES = new URL("../../tests/fixtures/composition/bundles/", import.meta.url);

interface Captured extends TrtIo {
  readonly out: string[];
  readonly err: string[];
}

function io(env: Record<string, string> = {}, cwd = ROOT): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    env: { get: (name) => env[name] },
    cwd,
  };
}

async function tempHome(files: Record<string, string>): Promise<{ dir: string } & AsyncDisposable> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-trt-" }));
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

async function trt(args: string[], captured: Captured): Promise<[number, string, string]> {
  const code = await runTrt(args, captured, { bundleDirs: [FIXTURE_BUNDLES] });
  return [code, captured.out.join(""), captured.err.join("")];
}

Deno.test("trt without a verb, with an unknown verb or flag, or a missing value exits 2 with one clear line", async () => {
  const [none, , noneErr] = await trt([], io());
  assert.equal(none, 2);
  assert.equal(noneErr.split("\n")[0], "Usage: trt <verb> [flags]");
  assert.deepStrictEqual(await trt(["frob"], io()), [
    2,
    "",
    'trt: unknown verb "frob" (verbs: serve, dump-config, doctor, permissions, usage, credentials, sandbox, mcp, acp; see trt --help)\n',
  ]);
  assert.deepStrictEqual(await trt(["doctor", "--verbose"], io()), [
    2,
    "",
    'trt doctor: unknown flag "--verbose" (see trt doctor --help)\n',
  ]);
  assert.deepStrictEqual(await trt(["dump-config", "--profile"], io()), [
    2,
    "",
    'trt dump-config: flag "--profile" needs a value (NAME|PATH) (see trt dump-config --help)\n',
  ]);
  assert.deepStrictEqual(await trt(["serve", "--scoped=yes"], io()), [
    2,
    "",
    'trt serve: flag "--scoped" takes no value (see trt serve --help)\n',
  ]);
  assert.deepStrictEqual(await trt(["permissions", "extra"], io()), [
    2,
    "",
    'trt permissions: unexpected argument "extra" (see trt permissions --help)\n',
  ]);
});

Deno.test("every verb has --help; acp without a standard input stream says so and exits 1", async () => {
  for (const verb of ["serve", "dump-config", "doctor", "permissions", "acp"]) {
    const [code, out, err] = await trt([verb, "--help"], io());
    assert.equal(code, 0);
    assert.equal(out.split("\n")[0], `Usage: trt ${verb} [flags]`);
    assert.equal(err, "");
  }
  assert.deepStrictEqual(await trt(["acp"], io()), [
    1,
    "",
    "trt acp: cannot serve ACP: this process has no standard input stream\n",
  ]);
});

Deno.test("trt permissions prints the headless profile's flags: the exec rows' grants and what trt needs", async () => {
  await using home = await tempHome({});
  const [code, out, err] = await trt(["permissions"], io({ TERRET_HOME: home.dir }));
  assert.equal(err, "");
  assert.equal(code, 0);
  // node-pty's package directory, as the exec rows scope --allow-ffi (pinned in exec's subprocess test).
  const [ffi] = pluginPermissions(shellPlugin, parseConfig(shellPlugin, {}, "shell"))
    .ffi as string[];
  assert.equal(
    out,
    [
      // node-pty (subprocess, shell, terminals) opens the pty master as a path-less tty stream and kills
      // process groups; the sandbox row looks the bare `docker` name up on PATH.
      "--allow-read",
      "--allow-write",
      // The llm.main row reaches OpenRouter and reads its key from OPENROUTER_API_KEY; the interfaces.ws row
      // listens on 127.0.0.1:7878 and reads its token from TERRET_TOKEN.
      "--allow-net=127.0.0.1:7878,openrouter.ai",
      "--allow-env=DOCKER_API_VERSION,DOCKER_CERT_PATH,DOCKER_CONFIG,DOCKER_CONTEXT,DOCKER_HOST,DOCKER_TLS_VERIFY,HOME,LANG,LC_ALL,LC_CTYPE,LOGNAME,OPENROUTER_API_KEY,PATH,TERRET_CREDENTIALS_KEY,TERRET_TOKEN,TMPDIR,TZ,USER",
      "--allow-run",
      `--allow-ffi=${ffi}`,
      "--allow-sys=gid,uid",
      "--ignore-env=LOG_STREAM,LOG_TOKENS",
      "",
    ].join("\n"),
  );
  const [, json] = await trt(["permissions", "--json", "--home", home.dir], io());
  assert.deepStrictEqual(JSON.parse(json).grants.read, {
    unscoped: true,
    unscopedBy: ["sandbox", "subprocess", "shell", "terminals"],
    // Sorted, so where the clone and the temporary home live decides the order.
    scopes: [
      `${home.dir}/credentials`,
      `${home.dir}/serve.lock`,
      `${home.dir}/sessions`,
      `${home.dir}/ws`,
      `${ROOT}bundles/base.yml`,
      `${ROOT}bundles/profiles/headless`,
    ].sort(),
    by: {
      // The encrypted credential store's directory.
      [`${home.dir}/credentials`]: ["credentials"],
      // The SQLite store's directory under the Terret home (the file, its -wal and -shm siblings).
      [`${home.dir}/sessions`]: ["sessions.store"],
      // The socket's token file (generated there when TERRET_TOKEN is unset).
      [`${home.dir}/ws`]: ["interfaces.ws"],
      // trt serve's home lock.
      [`${home.dir}/serve.lock`]: ["trt"],
      [`${ROOT}bundles/base.yml`]: ["trt"],
      [`${ROOT}bundles/profiles/headless`]: ["trt"],
    },
  });
  assert.deepStrictEqual(JSON.parse(json).grants.sys, {
    unscoped: false,
    unscopedBy: [],
    scopes: ["gid", "uid"],
    by: { gid: ["sandbox"], uid: ["sandbox"] },
  });
});

Deno.test("bad config from a user is one clear message naming file, row and key, exit 2, no stack trace", async () => {
  await using home = await tempHome({
    "profiles/dev/profile.yml": `bundles:\n  - greetings\n`,
    "syntax.yml": "rows:\n  - id: greeter\n    config: { greeting: [hi }\n",
    "type.yml": "rows:\n  - id: greeter\n    config:\n      greeting: hi\n      port: eighty\n",
    "missing.yml": "rows:\n  - id: greeter\n    config: { port: 80 }\n",
    "unknown.yml": "rows:\n  - id: greeterr\n    config: { greeting: hi }\n",
  });
  const cases: [string, string][] = [
    [
      "syntax.yml",
      `Cannot read "${home.dir}/syntax.yml": line 3, column 29: Flow sequence in block collection must be sufficiently indented and end with a ]`,
    ],
    [
      "type.yml",
      `Cannot configure row "greeter" (config set by --patch "${home.dir}/type.yml" line 5): config.port: expected number, received string`,
    ],
    [
      "missing.yml",
      `Cannot configure row "greeter" (config set by --patch "${home.dir}/missing.yml" line 3): config.greeting: expected string, received undefined`,
    ],
    [
      "unknown.yml",
      `Cannot apply row "greeterr" from --patch "${home.dir}/unknown.yml" line 2: no earlier layer has a row with this id (known: greeter, shouter); to insert a new row, give it a plugin`,
    ],
  ];
  for (const verb of ["serve", "dump-config", "permissions"]) {
    for (const [patch, message] of cases) {
      if (verb === "dump-config" && patch !== "syntax.yml" && patch !== "unknown.yml") continue;
      const captured = io({}, home.dir);
      const result = await trt(
        [verb, "--home", home.dir, "--profile", "dev", "--patch", patch],
        captured,
      );
      assert.deepStrictEqual(result, [2, "", `trt ${verb}: ${message}\n`]);
    }
  }
});

Deno.test("trt dump-config prints the annotated tree and trt doctor reports a clean profile", async () => {
  await using home = await tempHome({
    "profiles/dev/profile.yml": `bundles:\n  - greetings\n`,
    "patch.yml": "rows:\n  - id: greeter\n    config: { greeting: !env GREETING }\n",
  });
  const [code, out] = await trt(["dump-config", "--home", home.dir, "--profile", "dev"], io());
  assert.equal(code, 0);
  assert.deepStrictEqual(out.split("\n").filter((line) => line.startsWith("  #")), [
    `  # greeter: set by bundle greetings (${GREETINGS}:7); config by home patch (${home.dir}/patch.yml:2)`,
    `  # shouter: set by bundle greetings (${GREETINGS}:11)`,
  ]);
  assert.equal(out.includes("greeting: !env GREETING\n"), true);
  const clean = await trt(
    ["doctor", "--home", home.dir, "--profile", "dev"],
    io({ GREETING: "hi" }),
  );
  assert.deepStrictEqual(clean, [
    0,
    [
      `profile "dev" (${home.dir}/profiles/dev/profile.yml)`,
      "ok      rows greeter: config valid (greeter)",
      "ok      rows shouter: config valid (shouter)",
      "ok      permissions: every grant is scoped",
      "",
    ].join("\n"),
    "trt doctor: no errors, 0 warnings\n",
  ]);
  const [failing, report, summary] = await trt(
    ["doctor", "--home", home.dir, "--profile", "dev"],
    io(),
  );
  assert.equal(failing, 2);
  assert.equal(
    report.split("\n")[1],
    `error   rows greeter: Cannot resolve "!env GREETING" at row "greeter" key "config.greeting" (home patch "${home.dir}/patch.yml" line 2): the variable is not set`,
  );
  assert.equal(summary, "trt doctor: 1 error, 0 warnings\n");
});

Deno.test("trt serve boots, says no interface row is mounted, and disposes the context when stopped", async () => {
  await using home = await tempHome({ "profiles/dev/profile.yml": `bundles:\n  - greetings\n` });
  const stop = new AbortController();
  const captured = { ...io(), signal: stop.signal };
  stop.abort();
  const [code, out, err] = await trt(["serve", "--home", home.dir, "--profile", "dev"], captured);
  assert.equal(err, "");
  assert.equal(code, 0);
  assert.equal(
    out,
    [
      `trt serve: booted profile "dev" (${home.dir}/profiles/dev/profile.yml): 2 of 2 rows mounted (greeter, shouter)`,
      "trt serve: no interface row is mounted, so nothing is served (no interfaces.* row in the profile)",
      "trt serve: running until SIGINT or SIGTERM",
      "trt serve: stopped",
      "",
    ].join("\n"),
  );
});

Deno.test("trt serve prints the warnings of atServe checks (the hook the sandbox check uses)", async () => {
  await using home = await tempHome({ "profiles/dev/profile.yml": `bundles:\n  - greetings\n` });
  const stop = new AbortController();
  stop.abort();
  const captured = { ...io(), signal: stop.signal };
  const code = await runTrt(["serve", "--home", home.dir, "--profile", "dev"], captured, {
    bundleDirs: [FIXTURE_BUNDLES],
    checks: [{
      name: "sandbox",
      description: "which sandbox providers work here",
      atServe: true,
      run: (input) =>
        Promise.resolve([
          { level: "ok", check: "sandbox", message: "docker: works" },
          {
            level: "warning",
            check: "sandbox",
            message: `no isolating provider for ${input.prepared.length} rows; patch row "sandbox"`,
          },
        ]),
    }, {
      name: "doctor-only",
      description: "never runs at serve",
      run: () => Promise.reject(new Error("must not run at serve")),
    }],
  });
  assert.equal(code, 0);
  assert.equal(
    captured.err.join(""),
    'trt serve: warning: sandbox: no isolating provider for 2 rows; patch row "sandbox"\n',
  );
});
