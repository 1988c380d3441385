import assert from "node:assert/strict";
import { dockerLane } from "../../tests/docker/lane.ts";
import { probeSandboxProviders } from "./probe.ts";
import { bwrapLane } from "../../tests/bwrap_lane.ts";

const lane = await dockerLane();
const bwrapSkip = await bwrapLane();

Deno.test("probeSandboxProviders() reports none, docker, deno and bwrap with reasons", async () => {
  const probes = await probeSandboxProviders();
  const version = new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), { args: ["--version"], stdout: "piped" }).output())
      .stdout,
  ).split("\n")[0]!.trim();
  assert.deepStrictEqual(probes[0], {
    name: "none",
    available: true,
    isolated: false,
    reason: "runs programs on the host, uncontained (the row needs acknowledge_unsandboxed: true)",
  });
  assert.deepStrictEqual(probes[2], {
    name: "deno",
    available: true,
    isolated: true,
    reason: `${version} runs Deno programs (scripts, deno eval, npm: packages) only`,
  });
  if (bwrapSkip === undefined) {
    const bwrap = new TextDecoder().decode(
      (await new Deno.Command("bwrap", { args: ["--version"], stdout: "piped" }).output()).stdout,
    ).trim();
    assert.deepStrictEqual(probes[3], {
      name: "bwrap",
      available: true,
      isolated: true,
      reason:
        `${bwrap} creates unprivileged user namespaces here (each program in its own sandbox)`,
    });
  } else {
    assert.equal(probes[3]!.available, false);
  }
  if (lane.skip === undefined) {
    const server = new TextDecoder().decode(
      (await new Deno.Command("docker", {
        args: ["version", "--format", "{{.Server.Version}}"],
        stdout: "piped",
      }).output()).stdout,
    ).trim();
    assert.deepStrictEqual(probes[1], {
      name: "docker",
      available: true,
      isolated: true,
      reason: `Docker engine ${server} runs containers from "${lane.image}"`,
    });
  } else {
    assert.equal(probes[1]!.available, false);
  }
});

Deno.test("probeSandboxProviders() explains what is missing", async () => {
  const missing = await probeSandboxProviders({
    docker: "/nonexistent/docker",
    deno: "/nonexistent/deno",
    bwrap: "/nonexistent/bwrap",
  });
  assert.deepStrictEqual(missing.slice(1), [
    {
      name: "docker",
      available: false,
      isolated: true,
      reason: 'the docker CLI "/nonexistent/docker" is not installed',
    },
    {
      name: "deno",
      available: false,
      isolated: true,
      reason: 'the Deno binary "/nonexistent/deno" is not installed',
    },
    {
      name: "bwrap",
      available: false,
      isolated: true,
      reason:
        'bubblewrap "/nonexistent/bwrap" is not installed (Debian: apt-get install bubblewrap); use sandbox-docker or sandbox-deno instead',
    },
  ]);
});

Deno.test({
  name: "probeSandboxProviders() names a missing docker image",
  ignore: lane.skip !== undefined,
  async fn() {
    const [, docker] = await probeSandboxProviders({ image: "terret/no-such-image:missing" });
    assert.equal(docker!.available, false);
    assert.match(
      docker!.reason,
      /^Docker engine \S+ answers, but the image "terret\/no-such-image:missing" is missing: run `trt sandbox build` to build it from this host's binaries \(no registry needed\)$/,
    );
  },
});
