/**
 * Whether bubblewrap can contain programs here: the `bwrap` binary runs and unprivileged user namespaces work (a
 * throwaway `bwrap --unshare-user --unshare-all … true` succeeds). The `bwrap` provider runs it at mount and refuses
 * to mount when it fails; `trt doctor` reports it.
 *
 * @module
 */
import { resolveExecutable, runHostCommand } from "./_host_command.ts";

/** What {@linkcode probeBwrap} found. */
export type BwrapProbeResult =
  | {
    readonly ok: true;
    /** The absolute `bwrap` binary. */
    readonly bwrap: string;
    /** What answered (`bubblewrap 0.8.0`). */
    readonly version: string;
  }
  | {
    readonly ok: false;
    /** Why bubblewrap cannot contain programs here. */
    readonly reason: string;
  };

/** Options for {@linkcode probeBwrap}. */
export interface ProbeBwrapOptions {
  /** The `bwrap` binary: a name on `PATH` or an absolute path (default `"bwrap"`). */
  readonly bwrap?: string;
  /** Bound for each probe command (default 30 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Probes bubblewrap: the binary is found and answers `--version`, and a sandbox with a new user namespace (and
 * every other namespace) runs `true`.
 *
 * Contract: never throws for a missing or non-working bubblewrap (that is a `reason`, saying what to use instead);
 * starts nothing that outlives it. Tests replace it through the provider's `probe` option to simulate a host where
 * user namespaces are disabled.
 */
export async function probeBwrap(options: ProbeBwrapOptions = {}): Promise<BwrapProbeResult> {
  const name = options.bwrap ?? "bwrap";
  let bwrap: string;
  try {
    bwrap = await resolveExecutable(name);
  } catch {
    return {
      ok: false,
      reason: `bubblewrap "${name}" is not installed (Debian: apt-get install bubblewrap); ` +
        "use sandbox-docker or sandbox-deno instead",
    };
  }
  const run = (args: string[]) =>
    runHostCommand(bwrap, args, {
      timeoutMs: options.timeoutMs ?? 30_000,
      cwd: "/",
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    }).catch((error: Error) => ({ code: -1, stdout: "", stderr: error.message }));
  const version = await run(["--version"]);
  if (version.code !== 0) {
    return {
      ok: false,
      reason: `"${bwrap} --version" failed: ${lastLine(version.stderr)}; ` +
        "use sandbox-docker or sandbox-deno instead",
    };
  }
  const smoke = await run([
    "--unshare-user",
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--",
    "true",
  ]);
  if (smoke.code !== 0) {
    return {
      ok: false,
      reason:
        `bubblewrap cannot create an unprivileged user namespace here (${
          lastLine(smoke.stderr) || `exit ${smoke.code}`
        }): user namespaces are disabled (kernel.unprivileged_userns_clone, user.max_user_namespaces or an ` +
        "AppArmor restriction); enable them, or use sandbox-docker or sandbox-deno instead",
    };
  }
  return { ok: true, bwrap, version: version.stdout.trim() };
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}
