import assert from "node:assert/strict";
import { createContext, Loader, parseConfig, pluginPermissions, TerretError } from "@terret/hames";
import { SandboxKey, WorkspaceKey } from "@terret/core";
import { runSandboxConformance, spawnWrapped } from "../../tests/conformance/sandbox_provider.ts";
import { EXPECTED_ESCAPES, testEscapeBattery } from "../../tests/conformance/escape_battery.ts";
import { dockerLane } from "../../tests/docker/lane.ts";
import { workspacePlugin } from "../workspace.ts";
import { DockerSandbox, dockerSandboxPlugin } from "./docker.ts";

const lane = await dockerLane();

async function docker(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
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

runSandboxConformance({
  name: "docker",
  language: "shell",
  skip: lane.skip,
  create: (dirs) => {
    const sandbox = new DockerSandbox({ dirs, image: lane.image });
    return { sandbox, dispose: () => sandbox.dispose() };
  },
  // The wrapper sh, bash and its two sleeps, inside the container.
  runningProcesses: 4,
  async countProcesses(marker, subject) {
    const out = await docker(
      "exec",
      (subject.sandbox as DockerSandbox).container,
      "ps",
      "-eo",
      "args",
    );
    assert.equal(out.code, 0, out.stderr);
    return out.stdout.split("\n").filter((line) => line.includes(marker)).length;
  },
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

Deno.test("DockerSandbox builds the docker run and docker exec argvs", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerargv-" }));
  try {
    const sandbox = new DockerSandbox({
      dirs: [root],
      image: "img:1",
      network: "bridge",
      user: "1000:1001",
      memory: "256m",
      cpus: 1.5,
      pidsLimit: 64,
      home: "/srv/terret-home",
    });
    assert.equal(sandbox.isolated, false);
    assert.deepStrictEqual(sandbox.runArgs(), [
      "run",
      "-d",
      "--init",
      "--name",
      sandbox.container,
      "--label",
      "org.terret.sandbox=1",
      "--label",
      `org.terret.sandbox.host_pid=${Deno.pid}`,
      "--label",
      `org.terret.sandbox.boot=${sandbox.bootId}`,
      "--label",
      "org.terret.sandbox.home=/srv/terret-home",
      "--network",
      "bridge",
      "--hostname",
      "terret-sandbox",
      "--user",
      "1000:1001",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--tmpfs",
      "/run/terret:rw,mode=1777",
      "--mount",
      `type=bind,source=${root},target=${root}`,
      "--memory",
      "256m",
      "--cpus",
      "1.5",
      "--pids-limit",
      "64",
      "img:1",
      "sleep",
      "infinity",
    ]);
    const rootUser = new DockerSandbox({ dirs: [root], user: null, harden: false });
    assert.equal(rootUser.isolated, true);
    assert.deepStrictEqual(rootUser.runArgs().slice(11, 18), [
      "--network",
      "none",
      "--hostname",
      "terret-sandbox",
      "--tmpfs",
      "/run/terret:rw,mode=1777",
      "--mount",
    ]);
    const host = new DockerSandbox({ dirs: [root] });
    assert.deepStrictEqual(host.runArgs().slice(15, 17), ["--user", `${Deno.uid()}:${Deno.gid()}`]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name:
    "DockerSandbox wraps into docker exec: -i always, -t and the size only with tty, env by name but the image's own names",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerwrap-" }));
    await using sandbox = new DockerSandbox({ dirs: [root], image: lane.image });
    try {
      const plain = await sandbox.wrap(["bash", "-c", "echo hi"], {
        cwd: root,
        env: {
          SECRET: "s3cr3t",
          DOCKER_HOST: "tcp://inside",
          // The image's own: host directories and a host locale the container may not have.
          PATH: "/host/bin",
          HOME: "/host/home",
          TMPDIR: "/host/tmp",
          LANG: "de_DE.UTF-8",
          LANGUAGE: "de",
          LC_ALL: "de_DE.UTF-8",
          LC_MESSAGES: "de_DE.UTF-8",
        },
      });
      const [docker, , , , , , , , , , , , wrapper, , id] = plain.argv;
      assert.deepStrictEqual(plain.argv, [
        docker,
        "exec",
        "-i",
        "-w",
        root,
        "-e",
        "SECRET",
        "-e",
        "DOCKER_HOST=tcp://inside",
        sandbox.container,
        "/bin/sh",
        "-c",
        wrapper,
        "terret-exec",
        id,
        "",
        "",
        "bash",
        "-c",
        "echo hi",
      ]);
      assert.match(id!, /^[0-9a-f]{16}$/);
      assert.equal(plain.env.DOCKER_HOST, undefined, "the CLI keeps reaching the host's engine");
      assert.equal(plain.env.SECRET, "s3cr3t");
      for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"]) {
        assert.equal(plain.env[name], undefined, `${name} keeps the image's value`);
      }
      assert.equal(plain.argv.includes("s3cr3t"), false, "a value never travels in the argv");
      assert.equal(typeof plain.signal, "function");
      const tty = await sandbox.wrap(["bash"], { cwd: root, tty: true, columns: 91, rows: 33 });
      assert.deepStrictEqual(tty.argv.slice(1, 6), ["exec", "-i", "-t", "-w", root]);
      assert.deepStrictEqual(tty.argv.slice(-3), ["91", "33", "bash"]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the docker sandbox shares the workspace bytes both ways, as the configured user, with limits",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerlive-" }));
    await Deno.chmod(root, 0o777); // the container's user is not the owner
    await using sandbox = new DockerSandbox({
      dirs: [root],
      image: lane.image,
      user: "1234:2345",
      memory: "64m",
      pidsLimit: 32,
    });
    try {
      await Deno.writeTextFile(`${root}/from-host.txt`, "host bytes\n");
      const wrapped = await sandbox.wrap([
        "bash",
        "-c",
        "test -f /.dockerenv && echo dockerenv; id -u; id -g; cat from-host.txt; printf 'container bytes' > from-container.txt",
      ], { cwd: root });
      assert.deepStrictEqual(await run(wrapped.argv, wrapped.env, wrapped.cwd), {
        code: 0,
        stdout: "dockerenv\n1234\n2345\nhost bytes\n",
        stderr: "",
      });
      assert.equal(await Deno.readTextFile(`${root}/from-container.txt`), "container bytes");
      const info = await Deno.stat(`${root}/from-container.txt`);
      assert.deepStrictEqual([info.uid, info.gid], [1234, 2345]);
      const inspect = await docker(
        "inspect",
        "--format",
        "{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}} {{.HostConfig.NetworkMode}} {{.Config.User}}",
        sandbox.container,
      );
      assert.equal(inspect.stdout.trim(), `${64 * 1024 * 1024} 32 none 1234:2345`);
    } finally {
      await sandbox.dispose();
      await Deno.remove(root, { recursive: true });
    }
    assert.match((await docker("inspect", sandbox.container)).stderr, /No such (object|container)/);
  },
});

Deno.test({
  name: "the docker sandbox applies the terminal size before the program starts under a tty",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockertty-" }));
    await using sandbox = new DockerSandbox({ dirs: [root], image: lane.image });
    try {
      const wrapped = await sandbox.wrap(["stty", "size"], {
        cwd: root,
        tty: true,
        columns: 91,
        rows: 33,
      });
      // util-linux `script` gives the docker client a terminal, as node-pty does for the subprocess seam. Its
      // stdin stays open until the program exits (an early EOF would echo into the terminal).
      const quoted = wrapped.argv.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
      const child = new Deno.Command("script", {
        args: ["-qec", quoted, "/dev/null"],
        env: { ...wrapped.env },
        clearEnv: true,
        cwd: wrapped.cwd,
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const [stdout, status] = await Promise.all([new Response(child.stdout).text(), child.status]);
      await child.stdin.close();
      assert.deepStrictEqual([status.code, stdout], [0, "33 91\r\n"]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "the sandbox-docker row starts lazily, and unloading it removes the container",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerrow-" }));
    try {
      await using ctx = createContext({ mode: "test" });
      const loader = new Loader(ctx);
      await loader.load([
        { id: "sandbox", plugin: dockerSandboxPlugin, config: { image: lane.image } },
        { id: "workspace", plugin: workspacePlugin, config: { dirs: [root] } },
      ]);
      const sandbox = ctx.get(SandboxKey) as DockerSandbox;
      assert.deepStrictEqual([sandbox.name, sandbox.isolated], ["docker", true]);
      assert.equal((await docker("inspect", sandbox.container)).code, 1, "not started before use");
      await sandbox.workspaceReady();
      assert.equal(
        (await docker("inspect", "--format", "{{.State.Running}}", sandbox.container)).stdout
          .trim(),
        "true",
      );
      await loader.fiber("sandbox")!.dispose();
      assert.equal(ctx.has(SandboxKey), false);
      assert.equal((await docker("inspect", sandbox.container)).code, 1);
      await assert.rejects(sandbox.workspaceReady(), { code: "SandboxUnavailable" });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "a docker sandbox that cannot start says why and leaves no container",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerfail-" }));
    await using sandbox = new DockerSandbox({
      dirs: [root],
      image: "terret/no-such-image:missing",
    });
    try {
      const error = await sandbox.workspaceReady().then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof TerretError);
      assert.equal(error.code, "SandboxUnavailable");
      assert.match(error.message, /^Cannot start the docker sandbox: .*terret\/no-such-image/s);
      assert.equal((await docker("inspect", sandbox.container)).code, 1);
      await assert.rejects(
        new DockerSandbox({ dirs: ["/proc/x"] }).workspaceReady(),
        {
          code: "Denied",
          message: 'Cannot mount "/proc/x" into the docker sandbox: the container needs that path',
        },
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "the docker signal hook delivers SIGTERM to the program's group, which may clean up",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockerterm-" }));
    await using sandbox = new DockerSandbox({ dirs: [root], image: lane.image });
    try {
      const wrapped = await sandbox.wrap([
        "bash",
        "-c",
        "trap 'echo cleaning; sleep 0.2; echo cleaned; exit 5' TERM; echo ready; read -r line",
      ], { cwd: root });
      const child = spawnWrapped(wrapped, "piped");
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("ready\n")) out += (await reader.read()).value ?? "";
      await wrapped.signal!("SIGTERM");
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        out += chunk.value;
      }
      await child.stdin.close();
      const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
      assert.deepStrictEqual([out, status.code, stderr], ["ready\ncleaning\ncleaned\n", 5, ""]);
      const id = wrapped.argv[wrapped.argv.indexOf("terret-exec") + 1];
      const kept = await docker("exec", sandbox.container, "ls", "/run/terret");
      assert.deepStrictEqual(
        [kept.code, kept.stdout],
        [0, `${id}.pid\n`],
        "after a SIGTERM the record waits for the SIGKILL that follows",
      );
      await wrapped.signal!("SIGKILL");
      const left = await docker("exec", sandbox.container, "ls", "/run/terret");
      assert.deepStrictEqual([left.code, left.stdout], [0, ""], "the exec's record is gone");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the docker sandbox kills a program's leftovers when it exits, and SIGKILL reaches its whole session",
  ignore: lane.skip !== undefined,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-dockersess-" }));
    await using sandbox = new DockerSandbox({ dirs: [root], image: lane.image });
    const sleeping = async (marker: string) => {
      const out = await docker("exec", sandbox.container, "ps", "-eo", "args=");
      return out.stdout.split("\n").filter((line) => line === `sleep ${marker}`);
    };
    try {
      // A background process that ignores SIGTERM and holds the exec's stdout open: the exec ends only because
      // the wrapper kills it once bash has exited.
      const orphaning = await sandbox.wrap([
        "bash",
        "-c",
        "trap '' TERM; sleep 777001 & echo started",
      ], { cwd: root });
      assert.deepStrictEqual(await run(orphaning.argv, orphaning.env, orphaning.cwd), {
        code: 0,
        stdout: "started\n",
        stderr: "",
      });
      assert.deepStrictEqual(await sleeping("777001"), []);

      // `set -m` puts the job in a process group of its own: the group SIGKILL misses it, the session sweep not.
      const jobs = await sandbox.wrap([
        "bash",
        "-c",
        "set -m; sleep 777002 & echo started; wait",
      ], { cwd: root });
      const child = new Deno.Command(jobs.argv[0]!, {
        args: jobs.argv.slice(1),
        cwd: jobs.cwd,
        env: { ...jobs.env },
        clearEnv: true,
        detached: true,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let out = "";
      while (!out.includes("started\n")) out += (await reader.read()).value ?? "";
      assert.deepStrictEqual(await sleeping("777002"), ["sleep 777002"]);
      await jobs.signal!("SIGKILL");
      await reader.cancel();
      assert.equal((await child.status).code, 137, "the exec ended with its killed wrapper");
      assert.deepStrictEqual(await sleeping("777002"), []);
      const left = await docker("exec", sandbox.container, "ls", "/run/terret");
      assert.deepStrictEqual([left.code, left.stdout], [0, ""]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("the sandbox-docker row asks for the docker CLI, its variables, the workspace and the host's ids", () => {
  const grant = (config: unknown) =>
    pluginPermissions(dockerSandboxPlugin, parseConfig(dockerSandboxPlugin, config, "sandbox"), {
      provider: (key) =>
        key === WorkspaceKey ? { plugin: "workspace", config: { dirs: ["/srv/ws"] } } : undefined,
    });
  const client = [
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "DOCKER_API_VERSION",
    "DOCKER_CONFIG",
    "HOME",
  ];
  // A bare name is looked up on PATH: every PATH directory is read, which cannot be scoped.
  assert.deepStrictEqual(grant({}), {
    run: ["docker"],
    env: [...client, "PATH"],
    read: true,
    sys: ["uid", "gid"],
  });
  assert.deepStrictEqual(grant({ docker: "/usr/bin/docker", user: "1000:1000" }), {
    run: ["/usr/bin/docker"],
    env: client,
    read: ["/usr/bin/docker", "/srv/ws"],
  });
  assert.deepStrictEqual(grant({ docker: "/usr/bin/docker", user: null }).sys, undefined);
});

Deno.test({
  name:
    "a docker sandbox that may not read the host's uid refuses to start rather than run as root",
  permissions: { sys: false, read: true, run: true, env: true },
  async fn() {
    const sandbox = new DockerSandbox({ dirs: [], docker: "/bin/false" });
    await assert.rejects(
      sandbox.workspaceReady(),
      (error: unknown) =>
        error instanceof TerretError && error.code === "SandboxUnavailable" &&
        error.message.startsWith(
          "Cannot start the docker sandbox as the host's user: cannot read its uid and gid (",
        ) && error.message.endsWith("); grant --allow-sys=uid,gid or set the row's user"),
    );
    await sandbox.dispose();
  },
});

testEscapeBattery({
  name: "docker",
  language: "shell",
  sandbox: { plugin: dockerSandboxPlugin, config: { image: lane.image, pids_limit: 64 } },
  expected: EXPECTED_ESCAPES.docker,
}, lane.skip);
