/**
 * A MINIMAL docker `Sandbox` for the process seams' docker lane and `bench/shell_latency.ts`, written against the
 * `Sandbox` contract only. It stands in until the real provider (`exec/sandbox/docker.ts`, branch `sandbox`) is
 * merged; at integration the lane and the bench switch to the real provider's row and this file is deleted.
 *
 * What it does: one container per mount (`--init`, `--network none`, host uid:gid, each workspace directory
 * bind-mounted at the same real path); `wrap` → `docker exec -i [-t] -w cwd -e K=V… <id> sh -c 'echo $$ >pidfile;
 * exec "$@"' sh <argv>`; `signal` kills the exec'd process group inside the container by its pid file (killing
 * the host `docker exec` client does not reach it).
 *
 * @module
 */
import { definePlugin, type Plugin, TerretError } from "@terret/hames";
import { type Sandbox, SandboxKey, WorkspaceKey, type WrappedCommand } from "@terret/core";
import { isInside } from "@terret/exec";

/** The image `tests/docker/make_image.sh` builds. */
export const SANDBOX_IMAGE = Deno.env.get("TERRET_SANDBOX_IMAGE") ?? "terret/sandbox:test";

/** Why the docker lane cannot run here, or undefined when it can (an engine answers and the image exists). */
export async function dockerUnavailable(): Promise<string | undefined> {
  try {
    const info = await docker(["info", "--format", "{{.ServerVersion}}"]);
    if (info.code !== 0) return `no Docker engine answers (${info.stderr.trim()})`;
    const image = await docker(["image", "inspect", SANDBOX_IMAGE]);
    if (image.code !== 0) {
      return `image ${SANDBOX_IMAGE} is missing (run tests/docker/make_image.sh)`;
    }
    return undefined;
  } catch (error) {
    return `the docker CLI cannot run (${(error as Error).message})`;
  }
}

async function docker(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command("docker", { args, stdout: "piped", stderr: "piped" })
    .output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** The minimal docker provider as a plugin (row `sandbox`), for tests and benchmarks only. */
export const minimalDockerSandbox: Plugin<unknown> = definePlugin({
  name: "sandbox-docker-minimal",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  async apply(ctx) {
    const dirs = ctx.get(WorkspaceKey).dirs;
    const mounts = dirs.flatMap((dir) => ["-v", `${dir}:${dir}`]);
    const user = `${Deno.uid()}:${Deno.gid()}`;
    const started = await docker([
      "run",
      "-d",
      "--rm",
      "--init",
      "--network",
      "none",
      "--user",
      user,
      ...mounts,
      SANDBOX_IMAGE,
      "sleep",
      "infinity",
    ]);
    if (started.code !== 0) {
      throw new TerretError(
        "SandboxFailed",
        `Cannot start the container: ${started.stderr.trim()}`,
      );
    }
    const container = started.stdout.trim();
    ctx.effect(() => async () => void await docker(["rm", "-f", container]), "container");
    const hostEnv: Record<string, string> = {};
    for (const name of ["PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) hostEnv[name] = value;
    }
    const sandbox: Sandbox = {
      name: "docker-minimal",
      isolated: true,
      workspaceReady: () => Promise.resolve(),
      wrap(argv, options): Promise<WrappedCommand> {
        if (!dirs.some((dir) => isInside(options.cwd, dir))) {
          return Promise.reject(
            new TerretError(
              "Denied",
              `Cannot run in "${options.cwd}": outside the granted workspaces`,
            ),
          );
        }
        const pidFile = `/tmp/.terret-exec-${crypto.randomUUID()}.pid`;
        const env = Object.entries(options.env ?? {})
          .filter(([name]) => name !== "PATH" && name !== "HOME")
          .flatMap(([name, value]) => ["-e", `${name}=${value}`]);
        return Promise.resolve({
          argv: [
            "docker",
            "exec",
            "-i",
            ...(options.tty ? ["-t"] : []),
            "-w",
            options.cwd,
            ...env,
            container,
            "sh",
            "-c",
            `echo $$ > ${pidFile}; exec "$@"`,
            "sh",
            ...argv,
          ],
          cwd: options.cwd,
          env: hostEnv,
          signal: async (signal) => {
            const name = signal === "SIGKILL" ? "KILL" : "TERM";
            await docker([
              "exec",
              container,
              "sh",
              "-c",
              `test -f ${pidFile} && kill -${name} -$(cat ${pidFile}) 2>/dev/null; ` +
              (signal === "SIGKILL" ? `rm -f ${pidFile}; ` : "") + "true",
            ]);
          },
        });
      },
    };
    ctx.provide(SandboxKey, sandbox);
  },
});
