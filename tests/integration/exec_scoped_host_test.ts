/**
 * The execution world under the least-privilege host: `trt serve --scoped` runs the shipped `base` rows (the core's,
 * and workspace, fs, sandbox, subprocess, shell, terminals) under exactly the flags their permissions hooks declare, and a probe
 * row (`tests/fixtures/exec/world_probe.ts`) writes a file through fs, runs a shell command, a PTY and a piped child
 * that read it, and reports through fs. Once with `sandbox-none`; once with `sandbox-docker` (docker lane): its
 * hook must grant what the container start needs (the docker CLI, its variables, the host's uid:gid).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runTrt, type TrtIo } from "@terret/cli";
import { parseConfig, pluginPermissions } from "@terret/hames";
import { DEFAULT_INHERIT_ENV } from "@terret/exec/process";
import { shellPlugin } from "@terret/exec";
import { dockerLane } from "../docker/lane.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { NOTE, REPLY, type WorldReport } from "../fixtures/exec/world_probe.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = new URL("../../interfaces/cli/main.ts", import.meta.url).href;
const PROBE = fileURLToPath(new URL("../fixtures/exec/world_probe.ts", import.meta.url));
const lane = await dockerLane();

function capture(signal?: AbortSignal): TrtIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    env: { get: (name) => Deno.env.get(name) },
    cwd: ROOT,
    ...(signal === undefined ? {} : { signal }),
  };
}

/** node-pty's package directory, as the exec rows scope `--allow-ffi` (a unit test pins it to node-pty's path). */
function ptyScope(): string {
  const ffi = pluginPermissions(shellPlugin, parseConfig(shellPlugin, {}, "shell")).ffi;
  assert.ok(Array.isArray(ffi) && ffi.length === 1 && ffi[0]!.endsWith("/@lydell"), String(ffi));
  return ffi[0]!;
}

/** Serves the profile scoped until the probe's report appears in the workspace; returns flags and report. */
async function serveScoped(sandboxRow: string): Promise<{ flags: string[]; report: WorldReport }> {
  await using tree = await writeTree({
    "home/profiles/scoped/profile.yml":
      `bundles: [base]\nplugins:\n  world-probe: ${PROBE}#worldProbePlugin\n` +
      `settings:\n  sandbox:\n    image: ${lane.image}\n  sessions:\n    path: sessions/terret.db\n` +
      "  llm:\n    model: test/model\n",
  });
  const ws = tree.path("ws");
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    tree.path("home/profiles/scoped/patch.yml"),
    `rows:\n  - id: workspace\n    config: { dirs: [${ws}] }\n${sandboxRow}` +
      "  - id: probe\n    plugin: world-probe\n    after: terminals\n    config: {}\n" +
      // Not about the socket: no listener on the shared default port.
      "  - id: interfaces.ws\n    disabled: true\n",
  );
  const args = ["--home", tree.path("home"), "--profile", "scoped", "--allow-config-code"];
  const printed = capture();
  assert.equal(await runTrt(["permissions", ...args], printed), 0, printed.err.join(""));
  const flags = printed.out.join("").trimEnd().split("\n");

  const stop = new AbortController();
  const io = capture(stop.signal);
  const exit = runTrt(["serve", "--scoped", ...args], io, {
    self: { execPath: Deno.execPath(), mainModule: MAIN },
  });
  const deadline = Date.now() + 60_000;
  while (!io.out.join("").includes("trt serve: running until SIGINT or SIGTERM\n")) {
    if (Date.now() > deadline) {
      stop.abort();
      await exit;
      throw new Error(`serve did not come up: ${io.out.join("")} ${io.err.join("")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop.abort();
  assert.equal(await exit, 0, io.err.join(""));
  const report = JSON.parse(await Deno.readTextFile(`${ws}/report.json`));
  return { flags, report };
}

async function hostPlace() {
  return {
    mnt: await Deno.readLink("/proc/self/ns/mnt"),
    dockerenv: await Deno.stat("/.dockerenv").then(() => "dockerenv", () => "none"),
    hostname: (await Deno.readTextFile("/proc/sys/kernel/hostname")).trim(),
  };
}

const OUTSIDE = 'Denied: Cannot read "/etc/passwd": outside the granted workspaces';

Deno.test("the exec rows work under exactly the permissions they declare (sandbox-none)", async () => {
  const { flags, report } = await serveScoped(
    "  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n",
  );
  assert.deepStrictEqual(flags, [
    "--allow-read",
    "--allow-write",
    "--allow-net=openrouter.ai",
    `--allow-env=${
      [
        ...new Set([
          "HOME",
          "OPENROUTER_API_KEY",
          "OTEL_DENO",
          "OTEL_EXPORTER_OTLP_ENDPOINT",
          "TERRET_CREDENTIALS_KEY",
          ...DEFAULT_INHERIT_ENV,
        ]),
      ]
        .sort().join(",")
    }`,
    "--allow-run",
    `--allow-ffi=${ptyScope()}`,
    "--ignore-env=LOG_STREAM,LOG_TOKENS",
  ]);
  const place = await hostPlace();
  assert.deepStrictEqual(report, {
    sandbox: { name: "none", isolated: false },
    shell: { read: NOTE, place },
    pty: { read: NOTE, place },
    run: { read: REPLY, place },
    reply: REPLY,
    outside: OUTSIDE,
  });
});

Deno.test({
  name: "the exec rows work under exactly the permissions they declare (sandbox-docker)",
  ignore: lane.skip !== undefined,
  async fn() {
    const { flags, report } = await serveScoped("");
    assert.deepStrictEqual(flags, [
      "--allow-read",
      "--allow-write",
      "--allow-net=openrouter.ai",
      `--allow-env=${
        [
          ...new Set([
            "OPENROUTER_API_KEY",
            "OTEL_DENO",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "TERRET_CREDENTIALS_KEY",
            "DOCKER_API_VERSION",
            "DOCKER_CERT_PATH",
            "DOCKER_CONFIG",
            "DOCKER_CONTEXT",
            "DOCKER_HOST",
            "DOCKER_TLS_VERIFY",
            "HOME",
            "OPENROUTER_API_KEY",
            ...DEFAULT_INHERIT_ENV,
          ]),
        ].sort().join(",")
      }`,
      "--allow-run",
      `--allow-ffi=${ptyScope()}`,
      "--allow-sys=gid,uid",
      "--ignore-env=LOG_STREAM,LOG_TOKENS",
    ]);
    const host = await hostPlace();
    const place = { ...report.shell.place, dockerenv: "dockerenv", hostname: "terret-sandbox" };
    assert.notEqual(place.mnt, host.mnt);
    assert.deepStrictEqual(report, {
      sandbox: { name: "docker", isolated: true },
      shell: { read: NOTE, place },
      pty: { read: NOTE, place },
      run: { read: REPLY, place },
      reply: REPLY,
      outside: OUTSIDE,
    });
  },
});
