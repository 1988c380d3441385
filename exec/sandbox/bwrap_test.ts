import assert from "node:assert/strict";
import { createContext, Loader, parseConfig, pluginPermissions, TerretError } from "@terret/hames";
import { SandboxKey, WorkspaceKey } from "@terret/core";
import { runSandboxConformance } from "../../tests/conformance/sandbox_provider.ts";
import { EXPECTED_ESCAPES, testEscapeBattery } from "../../tests/conformance/escape_battery.ts";
import { bwrapLane } from "../../tests/bwrap_lane.ts";
import { workspacePlugin } from "../workspace.ts";
import { BwrapSandbox, bwrapSandboxPlugin } from "./bwrap.ts";
import { SECRET_PATHS, secretEntries } from "./_bwrap_args.ts";

const skip = await bwrapLane();

runSandboxConformance({
  name: "bwrap",
  language: "shell",
  skip,
  create: async (dirs) => {
    const sandbox = new BwrapSandbox({ dirs });
    await sandbox.workspaceReady();
    return { sandbox, dispose: () => sandbox.dispose() };
  },
  // bwrap (outside and as the namespace's init), bash and its two sleeps.
  runningProcesses: 5,
  expected: {
    read_passwd: "contained",
    read_outside: "contained",
    write_outside: "contained",
    network: "contained",
    symlink_out: "contained",
    dotdot: "contained",
    dangling_write: "contained",
    sibling_prefix: "contained",
    symlink_loop: "contained",
    cwd_outside: "refused",
    empty_workspace: "refused",
  },
});

interface Tree {
  readonly root: string;
  readonly ws: string;
  [Symbol.asyncDispose](): Promise<void>;
}

async function tree(): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bwrap-test-" }));
  await Deno.mkdir(`${root}/ws`);
  await Deno.mkdir(`${root}/outside`);
  return {
    root,
    ws: `${root}/ws`,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function run(argv: readonly string[], env: Readonly<Record<string, string>>, cwd: string) {
  const out = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    env: { ...env },
    clearEnv: true,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function refusal(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TerretError, String(error));
    return [error.code, error.message];
  }
  assert.fail("expected a refusal");
}

Deno.test({
  name:
    "BwrapSandbox builds the bwrap argv: namespaces, read-only system, masked secrets, the workspace",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    await using sandbox = new BwrapSandbox({
      dirs: [t.ws],
      limits: { openFiles: 256, cpuSeconds: 30 },
    });
    const wrapped = await sandbox.wrap(["bash", "-c", "echo hi"], {
      cwd: t.ws,
      env: { PATH: "/usr/bin:/bin", LD_PRELOAD: "/x.so", BASH_ENV: "/y" },
    });
    const argv = [...wrapped.argv];
    assert.equal(argv[0], "/usr/bin/bwrap");
    assert.deepStrictEqual(argv.slice(1, 8), [
      "--unshare-all",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--hostname",
      "terret-sandbox",
    ]);
    const pairs = (flag: string) =>
      argv.flatMap((arg, i) => arg === flag ? [`${argv[i + 1]} ${argv[i + 2]}`] : []);
    assert.deepStrictEqual(pairs("--bind"), [`${t.ws} ${t.ws}`]);
    assert.ok(pairs("--ro-bind").includes("/usr /usr"));
    assert.ok(pairs("--ro-bind").includes("/etc /etc"));
    assert.ok(
      pairs("--ro-bind").some((pair) =>
        /^\/tmp\/terret-bwrap-\w+\/empty \/etc\/shadow$/.test(pair)
      ),
    );
    assert.equal(argv.includes("--share-net"), false);
    // The loader's and shells' variables act inside only; the host-side bwrap gets the rest.
    assert.deepStrictEqual(pairs("--setenv"), ["LD_PRELOAD /x.so", "BASH_ENV /y"]);
    assert.deepStrictEqual(wrapped.env, { PATH: "/usr/bin:/bin" });
    assert.equal(wrapped.cwd, t.ws);
    assert.deepStrictEqual(argv.slice(argv.indexOf("--chdir")), [
      "--chdir",
      t.ws,
      "--",
      "/usr/bin/prlimit",
      "--nofile=256",
      "--cpu=30",
      "--",
      "bash",
      "-c",
      "echo hi",
    ]);
    assert.equal(sandbox.isolated, true);
    // With a terminal the PTY stays the controlling terminal; network: host shares the network.
    await using host = new BwrapSandbox({ dirs: [t.ws], network: "host" });
    const tty = await host.wrap(["bash"], { cwd: t.ws, tty: true });
    assert.equal(tty.argv.includes("--new-session"), false);
    assert.equal(tty.argv.includes("--share-net"), true);
    assert.equal(host.isolated, false);
  },
});

Deno.test({
  name:
    "limits.processes bounds all the sandbox's programs with a pids cgroup where one can be made",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    const sandbox = new BwrapSandbox({ dirs: [t.ws], limits: { processes: 16 } });
    const wrapped = await sandbox.wrap(["true"], { cwd: t.ws });
    const argv = [...wrapped.argv];
    const nproc = argv.slice(argv.indexOf("--chdir")).slice(3, 6);
    assert.deepStrictEqual(nproc, ["/usr/bin/prlimit", "--nproc=16", "--"]);
    if (argv[0] === "/bin/sh") {
      // This host lets Terret make a pids cgroup: each spawn joins it, then becomes bwrap.
      const procs = argv[4]!;
      assert.deepStrictEqual(argv.slice(0, 6), [
        "/bin/sh",
        "-c",
        'echo $$ > "$1" && shift && exec "$@"',
        "terret-cgroup",
        procs,
        "/usr/bin/bwrap",
      ]);
      const dir = procs.replace(/\/cgroup\.procs$/, "");
      assert.equal((await Deno.readTextFile(`${dir}/pids.max`)).trim(), "16");
      const out = await run(
        [
          ...argv.slice(0, -1),
          "/bin/sh",
          "-c",
          "i=0; while [ $i -lt 40 ]; do sleep 2 & i=$((i+1)); done; echo $i",
        ],
        wrapped.env,
        wrapped.cwd,
      );
      assert.equal(out.stdout, "", "the 40 forks did not all succeed");
      assert.match(out.stderr, /Cannot fork/);
      await sandbox.dispose();
      assert.equal(await Deno.stat(dir).then(() => "left", () => "removed"), "removed");
    } else {
      assert.equal(argv[0], "/usr/bin/bwrap");
      await sandbox.dispose();
    }
  },
});

Deno.test({
  name:
    "read_only paths are readable and not writable inside; network: host shares the host's loopback",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    await Deno.writeTextFile(`${t.root}/outside/tool.txt`, "toolchain");
    await using sandbox = new BwrapSandbox({
      dirs: [t.ws],
      readOnly: [`${t.root}/outside`],
      network: "host",
    });
    using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepted = listener.accept().then((conn) => conn.close());
    const script = `cat '${t.root}/outside/tool.txt'; echo; ` +
      `(printf x > '${t.root}/outside/new.txt') 2>/dev/null || echo read-only; ` +
      `(exec 3<>/dev/tcp/127.0.0.1/${listener.addr.port}) && echo connected`;
    const wrapped = await sandbox.wrap(["/bin/bash", "-c", script], { cwd: t.ws });
    const out = await run(wrapped.argv, wrapped.env, wrapped.cwd);
    await accepted;
    assert.deepStrictEqual(out, {
      code: 0,
      stdout: "toolchain\nread-only\nconnected\n",
      stderr: "",
    });
    assert.equal(
      await Deno.stat(`${t.root}/outside/new.txt`).then(() => "written", () => "absent"),
      "absent",
    );
    assert.equal(sandbox.isolated, false);
  },
});

Deno.test({
  name: "the bwrap sandbox hides every listed secret that exists here and runs as the same uid",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    await using sandbox = new BwrapSandbox({ dirs: [t.ws] });
    const secrets = await secretEntries(SECRET_PATHS, ["/etc", "/usr"]);
    assert.ok(secrets.some((secret) => secret.path === "/etc/shadow"), "this host has /etc/shadow");
    const script = [
      "id -u; id -g",
      ...secrets.map((s) =>
        s.kind === "file"
          ? `printf '%s %s\\n' "${s.path}" "$(wc -c < '${s.path}')"`
          : `printf '%s %s\\n' "${s.path}" "$(ls -A '${s.path}' | wc -l)"`
      ),
      "grep CapEff /proc/self/status",
      "ls /",
    ].join("; ");
    const wrapped = await sandbox.wrap(["/bin/sh", "-c", script], { cwd: t.ws });
    const out = await run(wrapped.argv, wrapped.env, wrapped.cwd);
    const uid = Deno.uid()!;
    const gid = Deno.gid()!;
    const top = t.root.split("/")[1];
    assert.deepStrictEqual(out, {
      code: 0,
      stdout: [
        String(uid),
        String(gid),
        ...secrets.map((s) => `${s.path} 0`),
        "CapEff:\t0000000000000000",
        ...[...new Set(["bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr", top])]
          .sort(),
        "",
      ].join("\n"),
      stderr: "",
    });
  },
});

Deno.test({
  name: "the bwrap sandbox refuses at mount what it cannot contain, and never runs it",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    await Deno.symlink(`${t.root}/outside`, `${t.ws}/out`);
    const cases: [readonly string[], Partial<ConstructorParameters<typeof BwrapSandbox>[0]>][] = [
      [[t.ws], { bwrap: "/nonexistent/bwrap" }],
      [[t.ws], {
        probe: () =>
          Promise.resolve({ ok: false, reason: "user namespaces are disabled (simulated)" }),
      }],
      [[`${t.root}/missing`], {}],
      [[`${t.ws}/out`], {}],
      [["/"], {}],
      [["/etc"], {}],
      [["/dev/shm"], {}],
    ];
    const results = [];
    for (const [dirs, options] of cases) {
      const sandbox = new BwrapSandbox({ dirs, ...options });
      results.push(
        await refusal(sandbox.workspaceReady()).catch((error) => {
          throw new Error(`${dirs} ${JSON.stringify(options)}: ${error.message}`);
        }),
      );
      assert.equal(sandbox.isolated, false);
      // wrap refuses too: it prepares first, and the cwd must be inside the (refused) workspace.
      await assert.rejects(sandbox.wrap(["true"], { cwd: dirs[0]! }), TerretError);
    }
    assert.deepStrictEqual(results, [
      [
        "SandboxUnavailable",
        'Cannot prepare the bwrap sandbox: bubblewrap "/nonexistent/bwrap" is not installed (Debian: apt-get install bubblewrap); use sandbox-docker or sandbox-deno instead',
      ],
      [
        "SandboxUnavailable",
        "Cannot prepare the bwrap sandbox: user namespaces are disabled (simulated)",
      ],
      ["NotFound", `Cannot bind "${t.root}/missing" into the bwrap sandbox: no such directory`],
      [
        "Denied",
        `Cannot bind "${t.ws}/out" into the bwrap sandbox: it is a symbolic link (to "${t.root}/outside")`,
      ],
      [
        "Denied",
        'Cannot bind "/" into the bwrap sandbox: the sandbox needs "/usr" for itself (read-only or private)',
      ],
      [
        "Denied",
        'Cannot bind "/etc" into the bwrap sandbox: the sandbox needs "/etc" for itself (read-only or private)',
      ],
      [
        "Denied",
        'Cannot bind "/dev/shm" into the bwrap sandbox: the sandbox needs "/dev" for itself (read-only or private)',
      ],
    ]);
  },
});

Deno.test({
  name:
    "the sandbox-bwrap row mounts isolated where user namespaces work, and refuses to mount where they do not or bwrap is missing",
  ignore: skip !== undefined,
  async fn() {
    await using t = await tree();
    await using ok = createContext({ mode: "test" });
    await new Loader(ok).load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [t.ws] } },
      { id: "sandbox", plugin: bwrapSandboxPlugin, config: {} },
    ]);
    const sandbox = ok.get(SandboxKey);
    assert.deepStrictEqual([sandbox.name, sandbox.isolated], ["bwrap", true]);
    // A bwrap that answers --version but, like a kernel with user namespaces disabled, cannot create one.
    const fake = `${t.root}/bwrap`;
    await Deno.writeTextFile(
      fake,
      '#!/bin/sh\nif [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n' +
        'echo "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const messages: string[] = [];
    for (const bwrap of [fake, "/nonexistent/bwrap"]) {
      await using bad = createContext({ mode: "test" });
      await new Loader(bad).load([
        { id: "workspace", plugin: workspacePlugin, config: { dirs: [t.ws] } },
        { id: "sandbox", plugin: bwrapSandboxPlugin, config: { bwrap } },
      ]).then(
        () => assert.fail("the row mounted"),
        (error: Error) => messages.push(error.message),
      );
      assert.equal(bad.has(SandboxKey), false);
    }
    assert.deepStrictEqual(messages, [
      'Cannot boot: row "sandbox" failed to start: Cannot prepare the bwrap sandbox: bubblewrap cannot ' +
      "create an unprivileged user namespace here " +
      "(bwrap: setting up uid map: Permission denied): user namespaces are disabled " +
      "(kernel.unprivileged_userns_clone, user.max_user_namespaces or an AppArmor restriction); enable them, " +
      "or use sandbox-docker or sandbox-deno instead",
      'Cannot boot: row "sandbox" failed to start: Cannot prepare the bwrap sandbox: bubblewrap ' +
      '"/nonexistent/bwrap" is not installed (Debian: apt-get ' +
      "install bubblewrap); use sandbox-docker or sandbox-deno instead",
    ]);
  },
});

Deno.test("the sandbox-bwrap row asks to run bwrap and read the workspace and system directories", () => {
  const config = parseConfig(bwrapSandboxPlugin, { bwrap: "/usr/bin/bwrap" }, "sandbox");
  assert.deepStrictEqual(
    pluginPermissions(bwrapSandboxPlugin, config, {
      provider: (key) =>
        key === WorkspaceKey ? { plugin: "workspace", config: { dirs: ["/srv/ws"] } } : undefined,
    }),
    {
      run: ["/usr/bin/bwrap"],
      read: [
        "/srv/ws",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/etc",
        "/usr/bin/bwrap",
      ],
      write: ["/tmp"],
      sys: ["uid", "gid"],
    },
  );
});

testEscapeBattery({
  name: "bwrap",
  language: "shell",
  sandbox: { plugin: bwrapSandboxPlugin, config: { limits: { processes: 64 } } },
  expected: EXPECTED_ESCAPES.bwrap,
}, skip);
