// deno-lint-ignore-file no-console
/**
 * Issue 17 items 3 and 12 on the docker lane, through real `trt serve` processes: a server killed with SIGKILL
 * leaves its sandbox container running (labelled with the home and the boot), `trt doctor` removes it when no
 * server holds the home, and so does the next `trt serve` on the same home. A program in the container sees the
 * image's own `PATH`, `HOME`, `TMPDIR` and locale, not the host's.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { SessionEvent } from "@terret/core";
import { dockerLane } from "../docker/lane.ts";
import { WsClient } from "../ws/_clients.ts";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { scriptedCassette } from "./_cassette.ts";

const lane = await dockerLane();
if (lane.skip !== undefined) console.warn(`docker lane skipped: ${lane.skip}`);

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));

async function containersOf(home: string): Promise<string[]> {
  const out = await new Deno.Command("docker", {
    args: [
      "ps",
      "-a",
      "--filter",
      `label=org.terret.sandbox.home=${home}`,
      "--format",
      "{{.Names}}",
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => line !== "").sort();
}

/** Starts serve on `home`, runs one Bash call in the sandbox, returns the server and what the call printed. */
async function serveWithContainer(home: string, agent: string) {
  // A host HOME, PATH, TMPDIR and locale the image cannot have: what the program sees must be the image's own.
  const served = await serve(home, [`${home}/serve.yml`], {
    env: {
      HOME: "/host-home-terret",
      PATH: `/host-only-bin:${Deno.env.get("PATH")}`,
      TMPDIR: "/host-only-tmp",
      LANG: "xx_XX.UTF-8",
      LC_ALL: "xx_XX.UTF-8",
    },
  });
  const token = (await Deno.readTextFile(`${home}/ws/token`)).trim();
  const client = await WsClient.open(`ws://127.0.0.1:${served.port}/v1/agents/${agent}/stream`, {
    token,
  });
  client.send({ type: "subscribe", from_seq: 1 });
  client.send({ type: "message", content: "Run it." });
  const frames = await client.readUntil(
    (frame) => frame.type === "event" && (frame.event as SessionEvent).type === "turn/end",
    120_000,
  );
  await client.close();
  const result = frames.map((frame) => frame.event as SessionEvent).find((event) =>
    event?.type === "tool/result"
  )!.payload as { content: string };
  return { served, output: result.content };
}

Deno.test({
  name:
    "docker lane: kill -9 leaves the labelled container; trt doctor and the next trt serve on the home remove it",
  ignore: lane.skip !== undefined,
  async fn() {
    await using tree = await writeTree({});
    const home = tree.dir;
    await Deno.mkdir(`${home}/work`);
    await Deno.writeTextFile(
      `${home}/cassette.jsonl`,
      scriptedCassette([
        {
          tool: "Bash",
          args: {
            command:
              'echo "PATH=$PATH HOME=$HOME TMPDIR=${TMPDIR-unset} LANG=$LANG LC_ALL=${LC_ALL-unset}"',
          },
        },
        { text: "Done." },
      ]),
    );
    await Deno.writeTextFile(
      `${home}/serve.yml`,
      [
        "rows:",
        "  - id: workspace",
        `    config: { dirs: [${home}/work] }`,
        "  - id: sandbox",
        `    config: { image: ${lane.image}, home: !setting terret.home }`,
        "  - id: tools.allow",
        "    config: { allow: [Bash] }",
        // Nobody answers approvals here, and the cassette scripts the turns only (no title call).
        "  - id: approvals",
        "    config: { allow: [Bash], always_can_be_ruled: true }",
        "  - id: titles",
        "    config: { auto: false }",
        "  - id: llm.main",
        "    config: { model: scripted/model, api_key: unused-key-0000 }",
        "  - id: llm.replayer",
        "    plugin: terret-llm-replayer",
        "    after: llm.main",
        `    config: { path: ${home}/cassette.jsonl, match: sequence }`,
        "  - id: interfaces.ws",
        "    config: { port: 0, token_file: ws/token, dir: !setting terret.home }",
        "",
      ].join("\n"),
    );
    const first = await serveWithContainer(home, "first");
    // The image's own PATH, HOME and locale, not the host's, and no warning from a shell started in a locale the
    // image lacks.
    assert.equal(
      first.output,
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=unset " +
        "LANG=C.UTF-8 LC_ALL=unset",
    );
    const leaked = await containersOf(home);
    assert.equal(leaked.length, 1);
    Deno.kill(first.served.pid, "SIGKILL");
    await first.served.stop().catch(() => {});
    // The server is gone; its container is not.
    assert.deepStrictEqual(await containersOf(home), leaked);
    const doctor = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "doctor", "--home", home, "--patch", `${home}/serve.yml`],
      cwd: ROOT,
      env: { OPENROUTER_API_KEY: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.deepStrictEqual(
      new TextDecoder().decode(doctor.stdout).split("\n").filter((line) =>
        line.includes("stale sandbox")
      ),
      [
        "warning sandbox: removed 1 stale sandbox container of this home that a server killed without shutting " +
        `down left running: ${leaked[0]}`,
      ],
    );
    assert.deepStrictEqual(await containersOf(home), []);

    // Again, and this time the next serve removes it at boot.
    const second = await serveWithContainer(home, "second");
    const again = await containersOf(home);
    assert.equal(again.length, 1);
    Deno.kill(second.served.pid, "SIGKILL");
    await second.served.stop().catch(() => {});
    const third = await serve(home, [`${home}/serve.yml`]);
    try {
      assert.deepStrictEqual(await containersOf(home), []);
    } finally {
      assert.equal((await third.stop()).code, 0);
    }
  },
});
