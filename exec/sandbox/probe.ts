/**
 * Which sandbox providers work on this machine, and why not (for `trt doctor`).
 *
 * @module
 */
import { clientEnv, DEFAULT_SANDBOX_IMAGE } from "./docker.ts";
import { resolveExecutable, runHostCommand } from "./_host_command.ts";
import { probeBwrap } from "./bwrap_probe.ts";

/** One provider's availability. */
export interface SandboxProbe {
  /** The provider (`sandbox.name`). */
  readonly name: "none" | "docker" | "deno" | "bwrap";
  /** Whether the provider can run programs here with the probed settings. */
  readonly available: boolean;
  /** Whether it isolates programs with its default settings. */
  readonly isolated: boolean;
  /** What was found: the version that answered, or why it cannot work. */
  readonly reason: string;
}

/** Options for {@linkcode probeSandboxProviders}. */
export interface ProbeSandboxOptions {
  /** The docker CLI (default `"docker"`). */
  readonly docker?: string;
  /** The docker image (default {@linkcode DEFAULT_SANDBOX_IMAGE}). */
  readonly image?: string;
  /** The Deno binary (default: the one running Terret). */
  readonly deno?: string;
  /** The bubblewrap binary (default `"bwrap"`). */
  readonly bwrap?: string;
  /**
   * Probe only these providers (default: all four); the answer lists them in the usual order. `trt serve` probes
   * only its sandbox row's provider: a docker probe runs a throwaway container.
   */
  readonly only?: readonly SandboxProbe["name"][];
  /** Bound for each probe command (default 30 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Probes `none`, `docker`, `deno` and `bwrap` (or the ones `only` names). Docker counts as available only when the
 * engine answers, the image exists and a throwaway container (`--network none`) actually runs `true` in it; bwrap
 * only when a throwaway sandbox with a new user namespace runs `true`.
 *
 * Contract: never throws for an unavailable provider (that is a `reason`); starts nothing that outlives it.
 */
export async function probeSandboxProviders(
  options: ProbeSandboxOptions = {},
): Promise<SandboxProbe[]> {
  const wanted = (name: SandboxProbe["name"]): boolean =>
    options.only === undefined || options.only.includes(name);
  const [docker, deno, bwrap] = await Promise.all([
    wanted("docker") ? probeDocker(options) : undefined,
    wanted("deno") ? probeDeno(options) : undefined,
    wanted("bwrap") ? probeBubblewrap(options) : undefined,
  ]);
  const none: SandboxProbe | undefined = wanted("none")
    ? {
      name: "none",
      available: true,
      isolated: false,
      reason:
        "runs programs on the host, uncontained (the row needs acknowledge_unsandboxed: true)",
    }
    : undefined;
  return [none, docker, deno, bwrap].filter((probe) => probe !== undefined);
}

async function probeBubblewrap(options: ProbeSandboxOptions): Promise<SandboxProbe> {
  const found = await probeBwrap({
    ...(options.bwrap === undefined ? {} : { bwrap: options.bwrap }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return found.ok
    ? {
      name: "bwrap",
      available: true,
      isolated: true,
      reason:
        `${found.version} creates unprivileged user namespaces here (each program in its own sandbox)`,
    }
    : { name: "bwrap", available: false, isolated: true, reason: found.reason };
}

async function probeDocker(options: ProbeSandboxOptions): Promise<SandboxProbe> {
  const unavailable = (reason: string): SandboxProbe => ({
    name: "docker",
    available: false,
    isolated: true,
    reason,
  });
  const image = options.image ?? DEFAULT_SANDBOX_IMAGE;
  let docker: string;
  try {
    docker = await resolveExecutable(options.docker ?? "docker");
  } catch {
    return unavailable(`the docker CLI "${options.docker ?? "docker"}" is not installed`);
  }
  const run = (args: string[]) =>
    runHostCommand(docker, args, {
      env: clientEnv(),
      timeoutMs: options.timeoutMs ?? 30_000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    }).catch((error: Error) => ({ code: -1, stdout: "", stderr: error.message }));
  const info = await run(["version", "--format", "{{.Server.Version}}"]);
  if (info.code !== 0) {
    return unavailable(`the Docker engine does not answer: ${lastLine(info.stderr)}`);
  }
  const version = info.stdout.trim();
  const inspect = await run(["image", "inspect", "--format", "{{.Id}}", image]);
  if (inspect.code !== 0) {
    return unavailable(
      `Docker engine ${version} answers, but the image "${image}" is missing: run \`trt sandbox build\` to build it from this host's binaries (no registry needed)`,
    );
  }
  const smoke = await run(["run", "--rm", "--network", "none", image, "true"]);
  if (smoke.code !== 0) {
    return unavailable(
      `Docker engine ${version} cannot run a container from "${image}": ${lastLine(smoke.stderr)}`,
    );
  }
  return {
    name: "docker",
    available: true,
    isolated: true,
    reason: `Docker engine ${version} runs containers from "${image}"`,
  };
}

async function probeDeno(options: ProbeSandboxOptions): Promise<SandboxProbe> {
  const unavailable = (reason: string): SandboxProbe => ({
    name: "deno",
    available: false,
    isolated: true,
    reason,
  });
  let deno: string;
  try {
    deno = options.deno === undefined ? Deno.execPath() : await resolveExecutable(options.deno);
  } catch {
    return unavailable(`the Deno binary "${options.deno}" is not installed`);
  }
  const out = await runHostCommand(deno, ["--version"], {
    env: { DENO_NO_UPDATE_CHECK: "1" },
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }).catch((error: Error) => ({ code: -1, stdout: "", stderr: error.message }));
  if (out.code !== 0) return unavailable(`"${deno} --version" failed: ${lastLine(out.stderr)}`);
  return {
    name: "deno",
    available: true,
    isolated: true,
    reason: `${
      out.stdout.split("\n")[0]!.trim()
    } runs Deno programs (scripts, deno eval, npm: packages) only`,
  };
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
