/**
 * A missing docker sandbox image has one story and one command: `trt doctor` says the image is missing and names
 * `trt sandbox build` (its rows check says the row's config is valid, not "ok"), and `trt sandbox build` builds the
 * image the profile's sandbox row names from the host's own binaries, after which doctor's sandbox check passes.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dockerLane } from "../docker/lane.ts";
import { writeTree } from "../fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));
const lane = await dockerLane();

async function trt(
  args: readonly string[],
  home: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: ROOT,
    env: { TERRET_HOME: home, OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
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

/** Doctor's lines about the sandbox row and its docker provider, whitespace collapsed. */
const dockerLines = (doctor: string): string[] =>
  doctor.split("\n").map((line) => line.replace(/\s+/g, " ")).filter((line) =>
    line.includes("sandbox-docker") || line.includes("sandbox: docker:") ||
    line.startsWith("error sandbox")
  );

Deno.test({
  name: "docker lane: doctor names trt sandbox build for a missing image, and the verb builds it",
  ignore: lane.skip !== undefined,
  fn: async () => {
    const tag = `terret/sandbox:trt-build-${Deno.pid}`;
    await using tree = await writeTree({
      "patch.yml": `rows:\n  - id: sandbox\n    config: { image: "${tag}", network: none }\n`,
    });
    const patch = ["--patch", tree.path("patch.yml")];
    try {
      const before = await trt(["doctor", ...patch], tree.path("home"));
      const engine = engineOf(before.stdout);
      const missing = `Docker engine ${engine} answers, but the image "${tag}" is missing: run ` +
        "`trt sandbox build` to build it from this host's binaries (no registry needed)";
      // One story: the row's config is valid, the image is missing, and one command builds it.
      assert.deepStrictEqual(dockerLines(before.stdout), [
        "ok rows sandbox: config valid (sandbox-docker)",
        `info sandbox: docker: unavailable: ${missing}`,
        `error sandbox sandbox: the docker sandbox cannot start on this machine: ${missing}. Every program an ` +
        'agent runs fails until it can (none runs unsandboxed): fix it, or patch row "sandbox" with another ' +
        "provider (plugin: sandbox-none with config {acknowledge_unsandboxed: true} runs programs on the host, " +
        "uncontained)",
      ]);
      assert.equal(before.code, 2);

      const built = await trt(["sandbox", "build", ...patch], tree.path("home"));
      assert.equal(built.code, 0, built.stderr);
      assert.equal(built.stdout, `${tag}\n`);
      assert.equal(
        built.stderr.split("\n")[0],
        `trt sandbox: building "${tag}" from this host's binaries (no registry)`,
      );
      const inspect = await new Deno.Command("docker", { args: ["image", "inspect", tag] })
        .output();
      assert.equal(inspect.code, 0);

      const again = await trt(["sandbox", "build", ...patch], tree.path("home"));
      assert.equal(again.code, 0);
      assert.equal(again.stderr.includes(`image ${tag} already exists (FORCE=1 to rebuild)`), true);

      const after = await trt(["doctor", ...patch], tree.path("home"));
      assert.deepStrictEqual(dockerLines(after.stdout).slice(0, 1), [
        "ok rows sandbox: config valid (sandbox-docker)",
      ]);
      assert.equal(
        dockerLines(after.stdout).some((line) => line.startsWith("error")),
        false,
        after.stdout,
      );
    } finally {
      await new Deno.Command("docker", { args: ["rmi", "-f", tag], stdout: "null", stderr: "null" })
        .output();
    }
  },
});

Deno.test("trt sandbox build refuses a profile whose sandbox row needs no image, and an unknown action", async () => {
  await using tree = await writeTree({
    "patch.yml":
      "rows:\n  - id: sandbox\n    plugin: sandbox-none\n    config: { acknowledge_unsandboxed: true }\n",
  });
  const none = await trt(
    ["sandbox", "build", "--patch", tree.path("patch.yml")],
    tree.path("home"),
  );
  assert.equal(none.code, 2);
  assert.equal(
    none.stderr,
    'trt sandbox: Cannot build an image: row "sandbox" of profile "headless" uses "sandbox-none", which ' +
      "needs none (only sandbox-docker runs programs in an image)\n",
  );
  const unknown = await trt(["sandbox", "frob"], tree.path("home"));
  assert.equal(unknown.code, 2);
  assert.equal(
    unknown.stderr,
    'trt sandbox: unknown action "frob" (usage: trt sandbox build [--force])\n',
  );
});

function engineOf(doctor: string): string {
  return /Docker engine (\S+) answers/.exec(doctor)?.[1] ?? "?";
}
