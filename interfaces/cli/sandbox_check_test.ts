import assert from "node:assert/strict";
import type { ProbeSandboxOptions, SandboxProbe } from "@terret/exec/sandbox";
import { probeSandboxProviders } from "@terret/exec";
import { acquireHomeLock, COMPOSITION_CHECKS, prepareRows, resolveProfile } from "@terret/terret";
import { createSandboxCheck, runTrt } from "./mod.ts";

const NONE: SandboxProbe = {
  name: "none",
  available: true,
  isolated: false,
  reason: "runs programs on the host",
};
const DENO: SandboxProbe = {
  name: "deno",
  available: true,
  isolated: true,
  reason: "deno 2.9.6 runs Deno programs only",
};
const DOCKER_OK: SandboxProbe = {
  name: "docker",
  available: true,
  isolated: true,
  reason: 'Docker engine 20.10 runs containers from "img:1"',
};
const DOCKER_DOWN: SandboxProbe = {
  name: "docker",
  available: false,
  isolated: true,
  reason: "the Docker engine does not answer: Cannot connect to the Docker daemon",
};

/** A scripted probe: answers `docker` as given (and only what `only` names) and records the options it was asked with. */
function scripted(docker: SandboxProbe, asked: ProbeSandboxOptions[]) {
  return (options: ProbeSandboxOptions = {}): Promise<SandboxProbe[]> => {
    asked.push(options);
    const all = [NONE, docker, DENO];
    return Promise.resolve(
      options.only === undefined ? all : all.filter((probe) => options.only!.includes(probe.name)),
    );
  };
}

/** What a scripted reaper was asked. */
type ReapAsked = { readonly docker?: string | undefined; readonly home: string };

/**
 * A scripted stale-container reaper (the real one runs the host's docker CLI, which these tests must not reach):
 * answers `answer` (or throws it) and records what it was asked.
 */
function scriptedReap(asked: ReapAsked[] = [], answer: string[] | Error = []) {
  return (options: ReapAsked): Promise<string[]> => {
    asked.push({ docker: options.docker, home: options.home });
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
}

async function profile(sandboxRow: string) {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-sbxcheck-" }));
  await Deno.mkdir(`${home}/profiles/dev`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/profiles/dev/profile.yml`,
    "bundles: [base]\nsettings:\n  sandbox:\n    image: img:1\n  sessions:\n    path: sessions.db\n" +
      "  llm:\n    model: test/model\n",
  );
  // The socket listens on an ephemeral port: the base bundle's fixed 7878 may be taken (by a parallel test or
  // anything else on the machine), and serve would then fail for a reason this test is not about.
  await Deno.writeTextFile(
    `${home}/profiles/dev/patch.yml`,
    `rows:\n${sandboxRow}  - id: interfaces.ws\n    config: { host: 127.0.0.1, port: 0, tokens: [], ` +
      "token_file: ws/token, dir: !setting terret.home }\n",
  );
  let prepared;
  let resolved;
  try {
    resolved = await resolveProfile("dev", { home, cwd: home, env: { get: () => undefined } });
    prepared = await prepareRows(resolved, { env: { get: () => undefined } });
  } catch (error) {
    await Deno.remove(home, { recursive: true });
    throw error;
  }
  return {
    home,
    input: { resolved, env: { get: () => undefined }, allowConfigCode: false, prepared },
    [Symbol.asyncDispose]: () => Deno.remove(home, { recursive: true }),
  };
}

const INFOS = (docker: SandboxProbe) => [
  "info - none: works (not isolating): runs programs on the host",
  `info - docker: ${docker.available ? "works (isolating)" : "unavailable"}: ${docker.reason}`,
  "info - deno: works (isolating): deno 2.9.6 runs Deno programs only",
];

function lines(findings: readonly { level: string; row?: string; message: string }[]): string[] {
  return findings.map((f) => `${f.level} ${f.row ?? "-"} ${f.message}`);
}

Deno.test("the sandbox check says a docker sandbox that cannot start is an error and names the row to patch", async () => {
  await using p = await profile("");
  const asked: ProbeSandboxOptions[] = [];
  const findings = await createSandboxCheck({
    probe: scripted(DOCKER_DOWN, asked),
    reap: scriptedReap(),
  }).run(p.input);
  assert.deepStrictEqual(asked, [{ docker: "docker", image: "img:1" }]);
  assert.deepStrictEqual(lines(findings), [
    ...INFOS(DOCKER_DOWN),
    "error sandbox the docker sandbox cannot start on this machine: the Docker engine does not answer: " +
    "Cannot connect to the Docker daemon. Every program an agent runs fails until it can (none runs " +
    'unsandboxed): fix it, or patch row "sandbox" with another provider (plugin: sandbox-none with config ' +
    "{acknowledge_unsandboxed: true} runs programs on the host, uncontained)",
  ]);
});

Deno.test("the sandbox check judges each provider of the sandbox row", async () => {
  const cases: [string, SandboxProbe, string][] = [
    [
      "",
      DOCKER_OK,
      `ok sandbox programs run in a docker container without a network (${DOCKER_OK.reason})`,
    ],
    [
      "  - id: sandbox\n    config: { image: img:1, network: bridge }\n",
      DOCKER_OK,
      'warning sandbox programs run in a docker container with network "bridge": not isolated (network: none isolates)',
    ],
    [
      "  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n",
      DOCKER_OK,
      'warning sandbox programs run UNSANDBOXED on the host (plugin "sandbox-none", acknowledged in its config); patch row "sandbox" with plugin: sandbox-docker to contain them (docker works here)',
    ],
    [
      "  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n",
      DOCKER_DOWN,
      'warning sandbox programs run UNSANDBOXED on the host (plugin "sandbox-none", acknowledged in its config); patch row "sandbox" with plugin: sandbox-docker to contain them',
    ],
    [
      "  - id: sandbox\n    plugin: sandbox-deno\n    config: {}\n",
      DOCKER_DOWN,
      "ok sandbox programs run as Deno programs under derived permissions; anything else is refused",
    ],
    [
      "  - id: sandbox\n    plugin: sandbox-deno\n    config: { net: [example.com] }\n",
      DOCKER_DOWN,
      "warning sandbox programs run as Deno programs under derived permissions; anything else is refused; not isolated: the row grants network or remote imports",
    ],
  ];
  for (const [row, docker, judged] of cases) {
    await using p = await profile(row);
    const findings = await createSandboxCheck({ probe: scripted(docker, []), reap: scriptedReap() })
      .run(p.input);
    assert.deepStrictEqual(lines(findings), [...INFOS(docker), judged], row);
  }
  await using off = await profile(
    "  - id: sandbox\n    disabled: true\n  - id: subprocess\n    disabled: true\n" +
      "  - id: shell\n    disabled: true\n  - id: terminals\n    disabled: true\n",
  );
  const findings = await createSandboxCheck({
    probe: scripted(DOCKER_OK, []),
    reap: scriptedReap(),
  }).run(off.input);
  assert.deepStrictEqual(lines(findings), [
    ...INFOS(DOCKER_OK),
    "info - no enabled row provides the sandbox, so nothing in this profile can run programs",
  ]);
});

Deno.test("the sandbox check removes a home's stale containers only while docker works and no server holds the home", async () => {
  await using p = await profile("");
  const ok =
    `ok sandbox programs run in a docker container without a network (${DOCKER_OK.reason})`;
  const run = (docker: SandboxProbe, reap: ReturnType<typeof scriptedReap>) =>
    createSandboxCheck({ probe: scripted(docker, []), reap }).run(p.input).then(lines);

  const asked: ReapAsked[] = [];
  assert.deepStrictEqual(await run(DOCKER_OK, scriptedReap(asked, ["c-1", "c-2"])), [
    ...INFOS(DOCKER_OK),
    ok,
    "warning - removed 2 stale sandbox containers of this home that a server killed without shutting down " +
    "left running: c-1, c-2",
  ]);
  assert.deepStrictEqual(asked, [{ docker: "docker", home: p.home }]);

  assert.deepStrictEqual(await run(DOCKER_OK, scriptedReap([], [])), [...INFOS(DOCKER_OK), ok]);

  assert.deepStrictEqual(
    await run(DOCKER_OK, scriptedReap([], new Error("permission denied (simulated)"))),
    [
      ...INFOS(DOCKER_OK),
      ok,
      "warning - cannot look for stale sandbox containers: permission denied (simulated)",
    ],
  );

  // Docker down: nothing to ask. A server holding the home: it reaps its own at mount.
  const untouched: ReapAsked[] = [];
  await run(DOCKER_DOWN, scriptedReap(untouched, ["c-1"]));
  const lock = await acquireHomeLock(p.home);
  try {
    assert.deepStrictEqual(await run(DOCKER_OK, scriptedReap(untouched, ["c-1"])), [
      ...INFOS(DOCKER_OK),
      ok,
    ]);
  } finally {
    await lock.release();
  }
  assert.deepStrictEqual(untouched, []);
});

Deno.test("the sandbox check judges a bwrap row by its probe", async () => {
  const up: SandboxProbe = {
    name: "bwrap",
    available: true,
    isolated: true,
    reason: "bubblewrap 0.8.0 creates unprivileged user namespaces here",
  };
  const down: SandboxProbe = {
    name: "bwrap",
    available: false,
    isolated: true,
    reason: "bubblewrap cannot create an unprivileged user namespace here (simulated)",
  };
  const cases: [string, SandboxProbe, string][] = [
    [
      "{}",
      up,
      "ok sandbox programs run in bubblewrap sandboxes without a network (bubblewrap 0.8.0 creates unprivileged user namespaces here)",
    ],
    [
      "{ network: host }",
      up,
      "warning sandbox programs run in bubblewrap sandboxes sharing the host's network: not isolated (network: none isolates) (bubblewrap 0.8.0 creates unprivileged user namespaces here)",
    ],
    [
      "{ bwrap: /opt/bwrap }",
      down,
      "error sandbox the bwrap sandbox cannot run on this machine: bubblewrap cannot create an unprivileged user " +
      "namespace here (simulated). The row refuses to mount, and no program runs unsandboxed: fix it, or patch " +
      'row "sandbox" with another provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} ' +
      "runs programs on the host, uncontained)",
    ],
  ];
  for (const [config, bwrap, judged] of cases) {
    await using p = await profile(
      `  - id: sandbox\n    plugin: sandbox-bwrap\n    config: ${config}\n`,
    );
    const asked: ProbeSandboxOptions[] = [];
    const findings = await createSandboxCheck({
      probe: (options = {}) => {
        asked.push(options);
        return Promise.resolve([NONE, DOCKER_DOWN, DENO, bwrap]);
      },
      reap: scriptedReap(),
    }).run(p.input);
    assert.deepStrictEqual(asked, [{ bwrap: config.includes("/opt") ? "/opt/bwrap" : "bwrap" }]);
    assert.deepStrictEqual(lines(findings), [
      ...INFOS(DOCKER_DOWN),
      `info - bwrap: ${bwrap.available ? "works (isolating)" : "unavailable"}: ${bwrap.reason}`,
      judged,
    ]);
  }
});

Deno.test("trt doctor lists the providers and serve prints the sandbox row's problem", async () => {
  await using p = await profile("");
  const asked: ProbeSandboxOptions[] = [];
  const checks = [
    ...COMPOSITION_CHECKS,
    createSandboxCheck({ probe: scripted(DOCKER_DOWN, asked), reap: scriptedReap() }),
  ];
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    stdout: (text: string) => void out.push(text),
    stderr: (text: string) => void err.push(text),
    env: { get: () => undefined },
    cwd: p.home,
  };
  assert.equal(await runTrt(["doctor", "--home", p.home, "--profile", "dev"], io, { checks }), 2);
  assert.deepStrictEqual(out.join("").split("\n").filter((line) => line.includes(" sandbox")), [
    "ok      rows sandbox: config valid (sandbox-docker)",
    "info    sandbox: none: works (not isolating): runs programs on the host",
    `info    sandbox: docker: unavailable: ${DOCKER_DOWN.reason}`,
    "info    sandbox: deno: works (isolating): deno 2.9.6 runs Deno programs only",
    `error   sandbox sandbox: the docker sandbox cannot start on this machine: ${DOCKER_DOWN.reason}. Every program an agent runs fails until it can (none runs unsandboxed): fix it, or patch row "sandbox" with another provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} runs programs on the host, uncontained)`,
  ]);
  assert.equal(err.join(""), "trt doctor: 1 error, 3 warnings\n");

  const stop = new AbortController();
  stop.abort();
  const served: string[] = [];
  assert.equal(
    await runTrt(["serve", "--home", p.home, "--profile", "dev"], {
      ...io,
      stdout: () => {},
      stderr: (text) => void served.push(text),
      signal: stop.signal,
    }, { checks }),
    0,
  );
  // Doctor probes every provider; serve only the row's.
  assert.deepStrictEqual(asked, [
    { docker: "docker", image: "img:1" },
    { only: ["docker"], docker: "docker", image: "img:1" },
  ]);
  assert.deepStrictEqual(served, [
    `trt serve: error: sandbox: the docker sandbox cannot start on this machine: ${DOCKER_DOWN.reason}. Every program an agent runs fails until it can (none runs unsandboxed): fix it, or patch row "sandbox" with another provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} runs programs on the host, uncontained)\n`,
  ]);
});

Deno.test("at serve the sandbox check probes only the sandbox row's provider, and none for sandbox-none", async () => {
  const none =
    "  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n";
  const deno = "  - id: sandbox\n    plugin: sandbox-deno\n    config: {}\n";
  const cases: [string, ProbeSandboxOptions[], string[]][] = [
    ["", [{ only: ["docker"], docker: "docker", image: "img:1" }], [
      INFOS(DOCKER_DOWN)[1]!,
      `error sandbox the docker sandbox cannot start on this machine: ${DOCKER_DOWN.reason}. Every program an agent runs fails until it can (none runs unsandboxed): fix it, or patch row "sandbox" with another provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} runs programs on the host, uncontained)`,
    ]],
    [deno, [{ only: ["deno"] }], [
      INFOS(DOCKER_DOWN)[2]!,
      "ok sandbox programs run as Deno programs under derived permissions; anything else is refused",
    ]],
    [none, [], [
      'warning sandbox programs run UNSANDBOXED on the host (plugin "sandbox-none", acknowledged in its config); patch row "sandbox" with plugin: sandbox-docker to contain them (`trt doctor` says which providers work here)',
    ]],
  ];
  for (const [row, probed, judged] of cases) {
    await using p = await profile(row);
    const asked: ProbeSandboxOptions[] = [];
    const findings = await createSandboxCheck({
      probe: scripted(DOCKER_DOWN, asked),
      reap: scriptedReap(),
    }).run({ ...p.input, atServe: true });
    assert.deepStrictEqual(asked, probed, row);
    assert.deepStrictEqual(lines(findings), judged, row);
  }
});

Deno.test("probeSandboxProviders probes only the providers `only` names", async () => {
  assert.deepStrictEqual(await probeSandboxProviders({ only: [] }), []);
  const [none, ...rest] = await probeSandboxProviders({ only: ["none"] });
  assert.deepStrictEqual([none?.name, none?.available, rest], ["none", true, []]);
  // The Deno running this test answers `--version`: that probe really runs, and the docker and bwrap ones do not.
  const probes = await probeSandboxProviders({ only: ["deno", "none"] });
  assert.deepStrictEqual(probes.map((probe) => [probe.name, probe.available]), [
    ["none", true],
    ["deno", true],
  ]);
});
