/**
 * The seed's acceptance, in Deno: one appended patch row (`sandbox` → docker) moves a shell command, a file
 * written by the fs seam and a PTY into the container together, with no change to the code that uses them.
 *
 * The shipped `base` bundle is booted twice through `Terret.boot`: with the profile's patch (a temp workspace,
 * `sandbox-none` acknowledged), then with the same profile plus a `--patch` file holding one row that puts
 * `sandbox` on the docker provider. The same probe code (`tests/fixtures/exec/world_probe.ts`) runs on both boots.
 * Container membership is shown by the mount namespace (this machine's own image has a `/.dockerenv`, so that file
 * alone cannot tell host from container here: it is asserted where it discriminates, against the host's), the
 * container's hostname, and the same bytes seen on both sides of the boundary.
 */
import assert from "node:assert/strict";
import { Terret } from "@terret/terret";
import { dockerLane } from "../docker/lane.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { exerciseWorld, NOTE, REPLY, type WorldReport } from "../fixtures/exec/world_probe.ts";

const lane = await dockerLane();

Deno.test({
  name:
    "one appended patch row moves the shell, an fs-written file and a PTY into the container together",
  ignore: lane.skip !== undefined,
  async fn() {
    await using tree = await writeTree({
      "home/profiles/swap/profile.yml":
        `bundles: [base]\nsettings:\n  sandbox:\n    image: ${lane.image}\n` +
        "  sessions:\n    path: sessions/terret.db\n  llm:\n    model: test/model\n",
      "swap.yml":
        "rows:\n  - id: sandbox\n    plugin: sandbox-docker\n    config: { image: !setting sandbox.image, network: none }\n",
    });
    const ws = tree.path("ws");
    await Deno.mkdir(ws);
    await Deno.writeTextFile(
      tree.path("home/profiles/swap/patch.yml"),
      `rows:\n  - id: workspace\n    config: { dirs: [${ws}] }\n` +
        "  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n" +
        // Not about the socket: no listener on the shared default port.
        "  - id: interfaces.ws\n    disabled: true\n",
    );
    const options = { home: tree.path("home"), cwd: tree.dir };
    const reports: WorldReport[] = [];
    const mounted: string[][] = [];
    for (const patches of [[], [tree.path("swap.yml")]]) {
      await using booted = await Terret.boot("swap", { ...options, patches });
      mounted.push(booted.rows.map((row) => `${row.composed.id}=${row.composed.plugin}`));
      reports.push(await exerciseWorld(booted.ctx));
      await Deno.remove(`${ws}/note.txt`);
      await Deno.remove(`${ws}/reply.txt`);
    }
    const rows = (sandbox: string) => [
      "workspace=workspace",
      "credentials=terret-credentials",
      "redaction=terret-redaction",
      "sessions.store=terret-store-sqlite",
      "sessions=terret-sessions",
      "llm=terret-llm",
      "llm.main=terret-llm-openrouter",
      "fs=fs",
      `sandbox=${sandbox}`,
      "subprocess=subprocess",
      "shell=shell",
      "terminals=terminals",
      "tools=terret-tools",
      "tools.std=terret-tools-std",
      "tools.allow=terret-tools-allow",
      "prompt=terret-prompt",
      "agents=terret-agents",
      "loop=terret-loop",
      "subagents=terret-subagents",
      "subagents.acp=terret-subagents-acp",
      "compaction=terret-compaction",
      "titles=terret-titler",
      "approvals=terret-approvals",
    ];
    assert.deepStrictEqual(mounted, [rows("sandbox-none"), rows("sandbox-docker")]);

    const hostPlace = {
      mnt: await Deno.readLink("/proc/self/ns/mnt"),
      dockerenv: await Deno.stat("/.dockerenv").then(() => "dockerenv", () => "none"),
      hostname: (await Deno.readTextFile("/proc/sys/kernel/hostname")).trim(),
    };
    const [host, docker] = reports as [WorldReport, WorldReport];
    const outside = 'Denied: Cannot read "/etc/passwd": outside the granted workspaces';
    assert.deepStrictEqual(host, {
      sandbox: { name: "none", isolated: false },
      shell: { read: NOTE, place: hostPlace },
      pty: { read: NOTE, place: hostPlace },
      run: { read: REPLY, place: hostPlace },
      reply: REPLY,
      outside,
    });
    const container = {
      mnt: docker.shell.place.mnt,
      dockerenv: "dockerenv",
      hostname: "terret-sandbox",
    };
    assert.match(container.mnt, /^mnt:\[\d+\]$/);
    assert.notEqual(container.mnt, hostPlace.mnt, "the programs ran in another mount namespace");
    assert.deepStrictEqual(docker, {
      sandbox: { name: "docker", isolated: true },
      shell: { read: NOTE, place: container },
      pty: { read: NOTE, place: container },
      run: { read: REPLY, place: container },
      reply: REPLY,
      outside,
    });
  },
});
