import assert from "node:assert/strict";
import { dockerLane } from "../../tests/docker/lane.ts";
import { probeSandboxProviders } from "./probe.ts";

const lane = await dockerLane();

Deno.test("probeSandboxProviders() reports none, docker and deno with reasons", async () => {
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
