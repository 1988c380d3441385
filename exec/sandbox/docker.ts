/**
 * The `docker` sandbox provider: one long-lived container per boot with every workspace directory bind-mounted at
 * its own real path, and every argv wrapped into `docker exec`.
 *
 * @module
 */
import { BOOT_LABEL, HOME_LABEL, reapStaleContainers } from "./docker_reap.ts";
import { definePlugin, type HostPermissions, type Logger, type Plugin } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { WrapOptions, WrappedCommand } from "@terret/core/seams";
import { z } from "zod";
import { checkArgv, checkEnv, containedCwd } from "./_wrap_checks.ts";
import { hostEnv, randomId, resolveExecutable, runHostCommand } from "./_host_command.ts";
import { grantedDirs } from "../workspace.ts";

/** The image used when none is configured: the one `trt sandbox build` (exec/sandbox/make_image.sh) builds without a registry. */
export const DEFAULT_SANDBOX_IMAGE = "terret/sandbox:test";

/** Where each exec records its process group inside the container (a tmpfs no workspace can shadow). */
const RUN_DIR = "/run/terret";

/**
 * Runs inside the container in front of every program: records the process group (its own pid; every `docker
 * exec` is a session and group leader), applies the terminal size, and runs the program. It catches SIGTERM (a
 * handler, which the program does not inherit, unlike an ignored signal) so that a group SIGTERM lets the program
 * clean up and the exec ends with the program's own status instead of the wrapper's. It exports `SANDBOX_EXEC_ID`,
 * which every descendant inherits, so a SIGKILL also finds those that left the session (`setsid`). When the program has exited
 * it kills whatever is left of its session (orphaned work, as the subprocess seam does with a host group whose
 * leader exited) and removes the record, unless a SIGTERM came: then the SIGKILL that always follows removes it,
 * finding it at once instead of waiting for a record that was already gone.
 * Arguments: id, columns, rows, then the program's argv.
 */
const EXEC_WRAPPER =
  `t=; trap t=1 TERM; id=$1; cols=$2; rows=$3; shift 3; f=${RUN_DIR}/$id.pid; echo $$ > "$f"; ` +
  `export SANDBOX_EXEC_ID="$id"; ` +
  `if [ -n "$cols" ]; then stty cols "$cols" rows "$rows" 2>/dev/null; fi; ` +
  `"$@"; s=$?; ` +
  `for p in $(ps -o pid= -s $$ 2>/dev/null); do [ "$p" = $$ ] || kill -KILL "$p" 2>/dev/null; done; ` +
  `[ -n "$t" ] || rm -f "$f"; exit $s`;

/**
 * Signals the process group an exec recorded (waiting up to a second for the record, in case the program is only
 * starting); SIGKILL also reaches every process left in the exec's session (jobs an interactive shell put in
 * groups of their own) and every process still carrying the exec's `SANDBOX_EXEC_ID` (a `setsid` child), and
 * removes the record. Arguments: id, signal name.
 */
const KILL_SCRIPT = `f=${RUN_DIR}/$1.pid; i=0; ` +
  `while [ ! -s "$f" ] && [ $i -lt 50 ]; do sleep 0.02; i=$((i+1)); done; ` +
  `[ -s "$f" ] || exit 0; p=$(cat "$f"); kill -$2 -$p 2>/dev/null; ` +
  `if [ "$2" = KILL ]; then ` +
  `for q in $(ps -o pid= -s $p 2>/dev/null); do kill -KILL "$q" 2>/dev/null; done; ` +
  `for d in /proc/[0-9]*; do grep -qxz "SANDBOX_EXEC_ID=$1" "$d/environ" 2>/dev/null && ` +
  `kill -KILL "\${d#/proc/}" 2>/dev/null; done; rm -f "$f"; fi; ` +
  `exit 0`;

/** The docker CLI's own environment variables, passed from the host so the CLI reaches the same engine. */
const CLIENT_ENV = [
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
  "DOCKER_API_VERSION",
];

/** Container paths a workspace directory may not be mounted over. */
const RESERVED = ["/proc", "/sys", "/dev", RUN_DIR];

/** Options for {@linkcode DockerSandbox}. */
export interface DockerSandboxOptions {
  /** The granted real directories, mounted read-write at the same path. */
  readonly dirs: readonly string[];
  /** The Terret home, written on the container as a label so a later boot can find it. */
  readonly home?: string;
  /** The image (default {@linkcode DEFAULT_SANDBOX_IMAGE}). */
  readonly image?: string;
  /** The container network (default `"none"`; anything else makes `isolated` false). */
  readonly network?: string;
  /** `uid:gid` (or a name) to run as; `null` runs as the image's user (root); default the host's uid:gid. */
  readonly user?: string | null;
  /** `--memory` (e.g. `"512m"`). */
  readonly memory?: string;
  /** `--cpus` (e.g. `1.5`). */
  readonly cpus?: number;
  /** `--pids-limit`. */
  readonly pidsLimit?: number;
  /** The docker CLI (default `"docker"` on the host's PATH). */
  readonly docker?: string;
  /** How long starting the container may take (default 60 s). */
  readonly startTimeoutMs?: number;
  /** Drop every capability and set `no-new-privileges` (default true). */
  readonly harden?: boolean;
  /** Where failures of the signal hook and of the removal are reported. */
  readonly logger?: Logger;
}

/**
 * The docker provider. `workspaceReady` starts the container (`docker run -d --init`, `--network none` unless
 * configured, the host's uid:gid, every workspace directory bind-mounted at its real path, optional
 * `--memory/--cpus/--pids-limit`); `wrap` returns `docker exec -i [-t] -w <cwd> [-e NAME…] <container> …` and a
 * `signal` hook that signals the program's process group inside the container, and with SIGKILL its whole session
 * (killing the host `docker exec` client does not stop it); `dispose` removes the container. When a program exits
 * on its own, what is left of its session in the container is killed.
 *
 * The program's environment crosses with `-e NAME` (the value travels in the CLI's environment, not its argv),
 * except the names the image owns (`PATH`, `HOME`, `TMPDIR`, the locale): those keep the image's values.
 * Limits: a program that calls `setsid` inside the container leaves its session and outlives the signal hook until
 * the container is removed; the container is not recreated if something outside removes it.
 */
export class DockerSandbox implements Sandbox, AsyncDisposable {
  readonly name = "docker";
  readonly isolated: boolean;
  readonly #options: DockerSandboxOptions;
  readonly #dirs: readonly string[];
  readonly #containerName: string;
  #starting: Promise<void> | undefined;
  #docker: string | undefined;
  #started = false;
  #disposed: Promise<void> | undefined;

  constructor(options: DockerSandboxOptions) {
    this.#options = options;
    this.#dirs = Object.freeze([...options.dirs]);
    this.isolated = (options.network ?? "none") === "none";
    this.#containerName = `terret-sandbox-${Deno.pid}-${randomId(4)}`;
    this.bootId = randomId(8);
  }

  /** This boot's id (the container's `org.terret.sandbox.boot` label). */
  readonly bootId: string;

  /** The container's name (it exists once `workspaceReady` resolved). */
  get container(): string {
    return this.#containerName;
  }

  /** Starts the container unless it runs already; concurrent calls share one start. */
  workspaceReady(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    if (this.#disposed) {
      return Promise.reject(
        new TerretError(
          "SandboxUnavailable",
          "Cannot prepare the docker sandbox: it was shut down",
        ),
      );
    }
    this.#starting ??= this.#start(options.signal).catch((error) => {
      this.#starting = undefined;
      throw error;
    });
    return this.#starting;
  }

  async wrap(argv: readonly string[], options: WrapOptions): Promise<WrappedCommand> {
    checkArgv(argv);
    const env = Object.fromEntries(
      Object.entries(checkEnv(options.env)).filter(([name]) => !isImageOwn(name)),
    );
    const cwd = await containedCwd(options.cwd, this.#dirs);
    await this.workspaceReady();
    const id = randomId();
    const client = clientEnv();
    // The value travels in the CLI's environment (`-e NAME`), out of the host's process list; a DOCKER_* name would
    // steer the CLI itself, so it is passed by value instead and kept out of the CLI's environment.
    const byName = Object.fromEntries(Object.entries(env).filter(([name]) => !isClientName(name)));
    const envFlags = Object.entries(env).flatMap(([name, value]) =>
      isClientName(name) ? ["-e", `${name}=${value}`] : ["-e", name]
    );
    const size = options.tty && options.columns && options.rows
      ? [String(Math.trunc(options.columns)), String(Math.trunc(options.rows))]
      : ["", ""];
    const docker = this.#docker!;
    const container = this.#containerName;
    const logger = this.#options.logger;
    return {
      argv: [
        docker,
        "exec",
        "-i",
        ...(options.tty ? ["-t"] : []),
        "-w",
        cwd,
        ...envFlags,
        container,
        "/bin/sh",
        "-c",
        EXEC_WRAPPER,
        "terret-exec",
        id,
        ...size,
        ...argv,
      ],
      cwd,
      env: { ...byName, ...client },
      async signal(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
        const name = signal === "SIGKILL" ? "KILL" : "TERM";
        try {
          const out = await runHostCommand(
            docker,
            ["exec", container, "/bin/sh", "-c", KILL_SCRIPT, "terret-kill", id, name],
            { env: client, timeoutMs: 15_000 },
          );
          if (out.code !== 0) throw new Error(out.stderr.trim() || `exit ${out.code}`);
        } catch (error) {
          logger?.log("warn", "Cannot signal a program in the docker sandbox", {
            container,
            signal,
            error: (error as Error).message,
          });
        }
      },
    };
  }

  /**
   * The `docker run` arguments that start the container (after `docker`).
   *
   * @throws {TerretError} `SandboxUnavailable` when `user` is not set and the host's uid:gid cannot be read
   */
  runArgs(): string[] {
    const o = this.#options;
    const args = ["run", "-d", "--init", "--name", this.#containerName];
    args.push(
      "--label",
      "org.terret.sandbox=1",
      "--label",
      `org.terret.sandbox.host_pid=${Deno.pid}`,
      "--label",
      `${BOOT_LABEL}=${this.bootId}`,
    );
    if (o.home !== undefined) args.push("--label", `${HOME_LABEL}=${o.home}`);
    args.push("--network", o.network ?? "none", "--hostname", "terret-sandbox");
    const user = o.user === undefined ? hostUser() : o.user;
    if (user !== null) args.push("--user", user);
    if (o.harden ?? true) args.push("--cap-drop", "ALL", "--security-opt", "no-new-privileges");
    args.push("--tmpfs", `${RUN_DIR}:rw,mode=1777`);
    for (const dir of this.#dirs) args.push("--mount", `type=bind,source=${dir},target=${dir}`);
    if (o.memory !== undefined) args.push("--memory", o.memory);
    if (o.cpus !== undefined) args.push("--cpus", String(o.cpus));
    if (o.pidsLimit !== undefined) args.push("--pids-limit", String(o.pidsLimit));
    args.push(o.image ?? DEFAULT_SANDBOX_IMAGE, "sleep", "infinity");
    return args;
  }

  /** Removes the container (idempotent; waits for a start in flight first). */
  dispose(): Promise<void> {
    this.#disposed ??= this.#remove();
    return this.#disposed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  async #start(signal: AbortSignal | undefined): Promise<void> {
    for (const dir of this.#dirs) checkMountable(dir);
    this.#docker ??= await resolveExecutable(this.#options.docker ?? "docker");
    this.#started = true;
    const out = await runHostCommand(this.#docker, this.runArgs(), {
      env: clientEnv(),
      timeoutMs: this.#options.startTimeoutMs ?? 60_000,
      ...(signal === undefined ? {} : { signal }),
    }).catch(async (error) => {
      await this.#forceRemove();
      throw error;
    });
    if (out.code !== 0) {
      await this.#forceRemove();
      throw new TerretError(
        "SandboxUnavailable",
        `Cannot start the docker sandbox: ${out.stderr.trim() || `docker exited ${out.code}`}`,
        { details: { image: this.#options.image ?? DEFAULT_SANDBOX_IMAGE } },
      );
    }
  }

  async #remove(): Promise<void> {
    await this.#starting?.catch(() => {});
    if (this.#started) await this.#forceRemove();
  }

  async #forceRemove(): Promise<void> {
    if (this.#docker === undefined) return;
    try {
      const out = await runHostCommand(this.#docker, ["rm", "-f", this.#containerName], {
        env: clientEnv(),
        timeoutMs: 30_000,
      });
      if (out.code !== 0 && !/No such container/i.test(out.stderr)) {
        throw new Error(out.stderr.trim());
      }
    } catch (error) {
      this.#options.logger?.log("warn", "Cannot remove the docker sandbox container", {
        container: this.#containerName,
        error: (error as Error).message,
      });
    }
  }
}

/** Config of the `sandbox-docker` row. */
export interface DockerSandboxConfig {
  readonly image: string;
  readonly network: string;
  readonly user?: string | null | undefined;
  readonly memory?: string | undefined;
  readonly cpus?: number | undefined;
  readonly pids_limit?: number | undefined;
  readonly docker: string;
  readonly start_timeout_ms: number;
  readonly harden: boolean;
  readonly home?: string | undefined;
}

const schema: z.ZodType<DockerSandboxConfig> = z.object({
  image: z.string().min(1).default(DEFAULT_SANDBOX_IMAGE).describe("The container image"),
  network: z.string().min(1).default("none").describe(
    'The container network; anything but "none" makes the sandbox not isolated',
  ),
  user: z.string().min(1).nullable().optional().describe(
    "uid:gid to run as (default: the host's); null runs as the image's user (root)",
  ),
  memory: z.string().regex(/^\d+[bkmg]?$/i).optional().describe('--memory, e.g. "512m"'),
  cpus: z.number().positive().optional().describe("--cpus, e.g. 1.5"),
  pids_limit: z.number().int().positive().optional().describe("--pids-limit"),
  docker: z.string().min(1).default("docker").describe(
    "The docker CLI (name on PATH or absolute path)",
  ),
  start_timeout_ms: z.number().int().positive().default(60_000).describe(
    "How long starting the container may take",
  ),
  harden: z.boolean().default(true).describe(
    "Drop every capability and set no-new-privileges in the container",
  ),
  home: z.string().min(1).optional().describe(
    "The Terret home (the base bundle passes it): the container is labelled with it, and at mount the containers " +
      "of this home left by an earlier boot (a server killed with SIGKILL) are removed",
  ),
});

/**
 * Provides the `docker` sandbox over the granted workspace; the container starts on the first `workspaceReady`
 * and is removed when the row is unloaded (shutdown, reconfigure, a replaced workspace).
 *
 * **Permissions**: run of the `docker` CLI; the docker CLI's variables (`DOCKER_HOST`, `DOCKER_CONTEXT`,
 * `DOCKER_CERT_PATH`, `DOCKER_TLS_VERIFY`, `DOCKER_API_VERSION`, `DOCKER_CONFIG`) and `HOME` (where its config
 * lives); read of the workspace directories (a cwd is resolved and checked) and of the CLI, looked up on `PATH`
 * when `docker` is a bare name — which needs read of every `PATH` directory, so only an absolute `docker:` keeps
 * read scoped; `--allow-sys=uid,gid` unless `user` is set (the container runs as the host's uid:gid).
 */
export const dockerSandboxPlugin: Plugin<DockerSandboxConfig> = definePlugin({
  name: "sandbox-docker",
  description:
    "Docker sandbox: one long-lived container per boot, workspaces bind-mounted at their real paths",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  config: schema,
  permissions(config, deps): HostPermissions {
    const dirs = grantedDirs(deps);
    const bare = !config.docker.includes("/");
    return {
      run: [config.docker],
      env: [...CLIENT_ENV, "DOCKER_CONFIG", "HOME", ...(bare ? ["PATH"] : [])],
      read: bare || dirs === true ? true : [config.docker, ...dirs],
      ...(config.user === undefined ? { sys: ["uid", "gid"] } : {}),
    };
  },
  async apply(ctx, config) {
    if (config.home !== undefined) {
      // One server per home (the home lock): a container of this home from another boot is stale.
      try {
        const reaped = await reapStaleContainers({ docker: config.docker, home: config.home });
        if (reaped.length > 0) {
          ctx.logger.log("warn", "Removed stale sandbox containers left by an earlier boot", {
            home: config.home,
            containers: reaped,
          });
        }
      } catch (error) {
        ctx.logger.log("debug", "Cannot look for stale sandbox containers", {
          error: (error as Error).message,
        });
      }
    }
    const sandbox = new DockerSandbox({
      ...(config.home === undefined ? {} : { home: config.home }),
      dirs: ctx.get(WorkspaceKey).dirs,
      image: config.image,
      network: config.network,
      ...(config.user === undefined ? {} : { user: config.user }),
      ...(config.memory === undefined ? {} : { memory: config.memory }),
      ...(config.cpus === undefined ? {} : { cpus: config.cpus }),
      ...(config.pids_limit === undefined ? {} : { pidsLimit: config.pids_limit }),
      docker: config.docker,
      startTimeoutMs: config.start_timeout_ms,
      harden: config.harden,
      logger: ctx.logger,
    });
    ctx.effect(() => () => sandbox.dispose(), "docker container");
    ctx.provide(SandboxKey, sandbox);
  },
});

function checkMountable(dir: string): void {
  if (/[,"\n]/.test(dir)) {
    throw new TerretError(
      "Denied",
      `Cannot mount "${dir}" into the docker sandbox: the path holds , " or a newline`,
    );
  }
  const reserved = dir === "/" || RESERVED.some((r) => dir === r || dir.startsWith(`${r}/`));
  if (reserved) {
    throw new TerretError(
      "Denied",
      `Cannot mount "${dir}" into the docker sandbox: the container needs that path`,
    );
  }
}

/**
 * The names whose values the image owns, so the host's do not cross into the container: `PATH`, `HOME` and `TMPDIR`
 * name host directories the container does not have, and the locale names (`LANG`, `LANGUAGE`, `LC_*`) a host
 * locale the image may lack (a program started in a locale its system lacks warns on every start: bash prints
 * "setlocale: LC_ALL: cannot change locale" ahead of the output). The container keeps its image's values (the
 * default image sets `LANG=C.UTF-8`); a different locale belongs in the image.
 */
function isImageOwn(name: string): boolean {
  return name === "PATH" || name === "HOME" || name === "TMPDIR" || name === "LANG" ||
    name === "LANGUAGE" || name.startsWith("LC_");
}

function isClientName(name: string): boolean {
  return /^DOCKER_/i.test(name);
}

/** The docker CLI's environment: the host's own DOCKER_* settings and a fixed config directory. */
export function clientEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of CLIENT_ENV) {
    const value = hostEnv(name);
    if (value !== undefined) env[name] = value;
  }
  // The CLI reads its config (credential helpers, contexts) from here; never from a HOME the program chose.
  const home = hostEnv("HOME");
  env.DOCKER_CONFIG = hostEnv("DOCKER_CONFIG") ?? `${home ?? "/root"}/.docker`;
  return env;
}

/**
 * The host's `uid:gid`, or null where the platform has none.
 *
 * @throws {TerretError} `SandboxUnavailable` when the host may not read them: running as the image's user (root)
 *   instead would be a silent escalation
 */
function hostUser(): string | null {
  let uid: number | null;
  let gid: number | null;
  try {
    uid = Deno.uid();
    gid = Deno.gid();
  } catch (error) {
    throw new TerretError(
      "SandboxUnavailable",
      `Cannot start the docker sandbox as the host's user: cannot read its uid and gid (${
        (error as Error).message
      }); grant --allow-sys=uid,gid or set the row's user`,
      { cause: error },
    );
  }
  return uid === null || gid === null ? null : `${uid}:${gid}`;
}
