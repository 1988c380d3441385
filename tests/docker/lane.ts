/**
 * The docker test lane's gate: is there a working Docker engine and the sandbox image? It never starts the engine
 * (CI does, with `start_dockerd.sh`); when the engine answers and only the image is missing, it builds the image
 * with `make_image.sh` (no registry needed). Tests that need Docker pass the returned `skip` reason to `ignore`,
 * and it is printed loudly (in CI, where every lane is required, a skip throws instead).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { DEFAULT_SANDBOX_IMAGE } from "@terret/exec/sandbox";
import { skipLane } from "../lane.ts";

/** The result of {@linkcode dockerLane}. */
export interface DockerLane {
  /** Set when the lane cannot run: why. */
  readonly skip: string | undefined;
  /** The sandbox image to use. */
  readonly image: string;
}

const here = fileURLToPath(new URL(".", import.meta.url));

async function run(
  program: string,
  args: string[],
  timeoutMs: number,
  env: Record<string, string> = {},
) {
  try {
    const out = await new Deno.Command(program, {
      args,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutMs),
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
  } catch (error) {
    return { code: -1, stderr: (error as Error).message };
  }
}

/** Checks for the engine and the image (building the image when only it is missing); warns loudly on a skip. */
export async function dockerLane(image = DEFAULT_SANDBOX_IMAGE): Promise<DockerLane> {
  const skip = await reason(image);
  if (skip !== undefined) {
    skipLane("docker", `${skip} (CI starts the engine with tests/docker/start_dockerd.sh)`);
  }
  return { skip, image };
}

async function reason(image: string): Promise<string | undefined> {
  const info = await run("docker", ["info", "--format", "{{.ServerVersion}}"], 15_000);
  if (info.code !== 0) {
    return `no working Docker engine (docker info: ${info.stderr || `exit ${info.code}`})`;
  }
  const inspect = await run("docker", ["image", "inspect", image], 15_000);
  if (inspect.code === 0) return undefined;
  // Test files run in parallel processes: one builds while the others wait, then find the image.
  const built = await run(
    "flock",
    ["/tmp/terret-make-image.lock", "bash", `${here}make_image.sh`],
    180_000,
    { TERRET_SANDBOX_IMAGE: image },
  );
  if (built.code !== 0) {
    return `cannot build the sandbox image ${image}: ${built.stderr.split("\n").at(-1)}`;
  }
  return undefined;
}
