/**
 * The `bwrap` sandbox provider: every spawn is wrapped in its own bubblewrap sandbox (no daemon, no image, no
 * long-lived container): new user, mount, PID, IPC, UTS, cgroup and network namespaces, the host's system
 * directories read-only minus listed secrets, the workspace directories read-write at their real paths, and a
 * private `/tmp`, `/proc` and `/dev`.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { WrapOptions, WrappedCommand } from "@terret/core/seams";
import { z } from "zod";
import { isAbsolute } from "node:path";
import { isInside } from "../paths.ts";
import { checkArgv, checkEnv, containedCwd } from "./_wrap_checks.ts";
import { randomId, resolveExecutable } from "./_host_command.ts";
import { createPidsCgroup, type PidsCgroup } from "./_pids_cgroup.ts";
import {
  bwrapArgs,
  type BwrapLimits,
  HOST_STEERING_ENV,
  identityFiles,
  RESERVED_PATHS,
  SECRET_PATHS,
  secretEntries,
  SYSTEM_PATHS,
  systemEntries,
  type SystemEntry,
} from "./_bwrap_args.ts";
import { type BwrapProbeResult, probeBwrap, type ProbeBwrapOptions } from "./bwrap_probe.ts";
import { grantedDirs } from "../workspace.ts";

/** Options for {@linkcode BwrapSandbox}. */
export interface BwrapSandboxOptions {
  /** The granted real directories, bound read-write at the same path. */
  readonly dirs: readonly string[];
  /** The `bwrap` binary (default `"bwrap"` on `PATH`). */
  readonly bwrap?: string;
  /** `"none"` (default): a network namespace with only loopback; `"host"` shares the host's (not isolated). */
  readonly network?: "none" | "host";
  /** More host paths bound read-only at the same path (a toolchain outside `/usr`, e.g. `/opt/node`). */
  readonly readOnly?: readonly string[];
  /** Resource limits applied with `prlimit` inside the sandbox. */
  readonly limits?: BwrapLimits;
  /**
   * The user-namespace probe (default {@linkcode probeBwrap}); a test passes one that fails to simulate a host
   * where user namespaces are disabled.
   */
  readonly probe?: (options: ProbeBwrapOptions) => Promise<BwrapProbeResult>;
}

interface Prepared {
  readonly bwrap: string;
  /** A private directory holding the sandbox's `passwd`, `group` and the empty file masking secrets. */
  readonly identityDir: string;
  readonly system: readonly SystemEntry[];
  readonly prlimit: string | undefined;
  /** The pids cgroup every spawn joins, when `limits.processes` is set and the host lets Terret make one. */
  readonly cgroup: PidsCgroup | undefined;
}

/** Runs on the host in front of `bwrap`: joins the sandbox's pids cgroup, then becomes `bwrap`. */
const JOIN_CGROUP = 'echo $$ > "$1" && shift && exec "$@"';

/**
 * The bwrap provider. `workspaceReady` (which the row runs at mount) probes bubblewrap and user namespaces and
 * checks every workspace directory (exists, is its own real path, is not `/`, a system directory or an ancestor of
 * one); each failure is a refusal (`SandboxUnavailable`, `NotFound` or `Denied`), never a run without containment.
 * `wrap` returns `bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL … -- <argv>`; signalling the
 * host process group reaches `bwrap`, whose death kills the sandbox's PID namespace (a `setsid` child included).
 *
 * The program's environment is the given one exactly; variables that would steer the loader or a shell of the
 * host-side `bwrap` process (`LD_PRELOAD`, `BASH_ENV`, …) are passed with `--setenv` instead, so they act only
 * inside the sandbox. With a terminal (`tty`) `--new-session` is left out so the program keeps the PTY as its
 * controlling terminal; that PTY is Terret's own, so `TIOCSTI` can only push input to the program itself.
 */
export class BwrapSandbox implements Sandbox {
  readonly name = "bwrap";
  readonly #options: BwrapSandboxOptions;
  readonly #dirs: readonly string[];
  #ready: Promise<Prepared> | undefined;
  #probed = false;

  constructor(options: BwrapSandboxOptions) {
    this.#options = options;
    this.#dirs = Object.freeze([...options.dirs]);
  }

  /** True once the probe proved user namespaces work, and only with `network: "none"`. */
  get isolated(): boolean {
    return this.#probed && (this.#options.network ?? "none") === "none";
  }

  /**
   * Probes bubblewrap and checks the workspace (once; a failure is retried on the next call).
   *
   * @throws {TerretError} `SandboxUnavailable` when bubblewrap is missing or user namespaces do not work;
   *   `NotFound` for a workspace directory that does not exist; `Denied` for one that is a link, not its real path,
   *   or a path the sandbox itself needs
   */
  async workspaceReady(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    this.#ready ??= this.#prepare(options.signal).catch((error) => {
      this.#ready = undefined;
      throw error;
    });
    await this.#ready;
  }

  async wrap(argv: readonly string[], options: WrapOptions): Promise<WrappedCommand> {
    checkArgv(argv);
    const env = checkEnv(options.env);
    const cwd = await containedCwd(options.cwd, this.#dirs);
    await this.workspaceReady();
    const prepared = (await this.#ready)!;
    const hostEnv: Record<string, string> = {};
    const setenv: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      if (HOST_STEERING_ENV.test(name)) setenv[name] = value;
      else hostEnv[name] = value;
    }
    const bound = [
      ...prepared.system.filter((entry) => entry.kind === "dir").map((entry) => entry.path),
      ...(this.#options.readOnly ?? []),
    ];
    const secrets = await secretEntries(SECRET_PATHS, bound);
    const limits = this.#options.limits;
    const args = bwrapArgs({
      system: prepared.system,
      secrets,
      dirs: this.#dirs,
      readOnly: this.#options.readOnly ?? [],
      network: this.#options.network ?? "none",
      cwd,
      tty: options.tty === true,
      setenv,
      identity: {
        passwd: `${prepared.identityDir}/passwd`,
        group: `${prepared.identityDir}/group`,
        empty: `${prepared.identityDir}/empty`,
      },
      prlimit: prepared.prlimit === undefined || limits === undefined
        ? undefined
        : { path: prepared.prlimit, limits },
    }, argv);
    const argvOut = prepared.cgroup === undefined ? [prepared.bwrap, ...args] : [
      "/bin/sh",
      "-c",
      JOIN_CGROUP,
      "terret-cgroup",
      `${prepared.cgroup.dir}/cgroup.procs`,
      prepared.bwrap,
      ...args,
    ];
    return { argv: argvOut, cwd, env: hostEnv };
  }

  async #prepare(signal: AbortSignal | undefined): Promise<Prepared> {
    const probe = this.#options.probe ?? probeBwrap;
    const found = await probe({
      ...(this.#options.bwrap === undefined ? {} : { bwrap: this.#options.bwrap }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (!found.ok) {
      throw new TerretError(
        "SandboxUnavailable",
        `Cannot prepare the bwrap sandbox: ${found.reason}`,
      );
    }
    const system = await systemEntries(SYSTEM_PATHS);
    const systemDirs = system.filter((entry) => entry.kind === "dir").map((entry) => entry.path);
    for (const dir of this.#dirs) await checkWorkspaceDir(dir, systemDirs);
    for (const path of this.#options.readOnly ?? []) await checkReadOnly(path);
    let prlimit: string | undefined;
    const limits = this.#options.limits ?? {};
    if (Object.values(limits).some((value) => value !== undefined)) {
      prlimit = await resolveExecutable("prlimit").catch(() => undefined);
      const bound = [...systemDirs, ...(this.#options.readOnly ?? [])];
      if (prlimit === undefined || !bound.some((dir) => isInside(prlimit!, dir))) {
        throw new TerretError(
          "SandboxUnavailable",
          "Cannot prepare the bwrap sandbox: its limits need prlimit (util-linux) in a system directory",
        );
      }
    }
    const identityDir = await writeIdentity();
    const cgroup = limits.processes === undefined
      ? undefined
      : await createPidsCgroup(limits.processes, randomId(6));
    this.#probed = true;
    return { bwrap: found.bwrap, system, prlimit, identityDir, cgroup };
  }

  /** Removes the files the sandbox made for itself (idempotent); wrapping after it prepares again. */
  async dispose(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    this.#probed = false;
    const prepared = await ready?.catch(() => undefined);
    if (prepared !== undefined) {
      await Deno.remove(prepared.identityDir, { recursive: true }).catch(() => {});
      await prepared.cgroup?.remove();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}

/** Writes the sandbox's `/etc/passwd` and `/etc/group` into a new private directory and returns it. */
async function writeIdentity(): Promise<string> {
  let uid: number | null;
  let gid: number | null;
  try {
    uid = Deno.uid();
    gid = Deno.gid();
  } catch (error) {
    throw new TerretError(
      "SandboxUnavailable",
      `Cannot prepare the bwrap sandbox: cannot read the host's uid and gid (${
        (error as Error).message
      }); grant --allow-sys=uid,gid`,
      { cause: error },
    );
  }
  const read = (path: string) => Deno.readTextFile(path).catch(() => "");
  const files = identityFiles(
    await read("/etc/passwd"),
    await read("/etc/group"),
    uid ?? 0,
    gid ?? 0,
  );
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "terret-bwrap-" });
  await Deno.writeTextFile(`${dir}/passwd`, files.passwd, { mode: 0o644 });
  await Deno.writeTextFile(`${dir}/group`, files.group, { mode: 0o644 });
  await Deno.writeTextFile(`${dir}/empty`, "", { mode: 0o444 });
  return dir;
}

async function checkWorkspaceDir(dir: string, systemDirs: readonly string[]): Promise<void> {
  const refuse = (why: string): never => {
    throw new TerretError("Denied", `Cannot bind "${dir}" into the bwrap sandbox: ${why}`, {
      details: { dir },
    });
  };
  if (!isAbsolute(dir)) refuse("the path is not absolute");
  const info = await Deno.lstat(dir).catch(() => undefined);
  if (info === undefined) {
    throw new TerretError(
      "NotFound",
      `Cannot bind "${dir}" into the bwrap sandbox: no such directory`,
      { details: { dir } },
    );
  }
  if (info.isSymlink) {
    refuse(`it is a symbolic link (to "${await Deno.realPath(dir).catch(() => "nowhere")}")`);
  }
  if (!info.isDirectory) refuse("it is not a directory");
  const real = await Deno.realPath(dir);
  if (real !== dir) refuse(`a component is a symbolic link (its real path is "${real}")`);
  // A workspace may sit inside a system directory (bound over it), never hold one or a path the sandbox makes.
  const clash = [...systemDirs, ...RESERVED_PATHS].find((path) => isInside(path, dir)) ??
    RESERVED_PATHS.find((path) => isInside(dir, path));
  if (clash !== undefined) {
    refuse(`the sandbox needs "${clash}" for itself (read-only or private)`);
  }
}

async function checkReadOnly(path: string): Promise<void> {
  if (!isAbsolute(path)) {
    throw new TypeError(`Cannot bind "${path}" read-only into the bwrap sandbox: not absolute`);
  }
  if ((await Deno.lstat(path).catch(() => undefined)) === undefined) {
    throw new TerretError(
      "NotFound",
      `Cannot bind "${path}" read-only into the bwrap sandbox: no such path`,
    );
  }
  const reserved = RESERVED_PATHS.find((dir) => isInside(path, dir) || isInside(dir, path));
  if (reserved !== undefined) {
    throw new TerretError(
      "Denied",
      `Cannot bind "${path}" read-only into the bwrap sandbox: the sandbox needs "${reserved}" for itself`,
    );
  }
}

/** Config of the `sandbox-bwrap` row. */
export interface BwrapSandboxConfig {
  readonly bwrap: string;
  readonly network: "none" | "host";
  readonly read_only: readonly string[];
  readonly limits: {
    readonly processes?: number | undefined;
    readonly open_files?: number | undefined;
    readonly memory_bytes?: number | undefined;
    readonly cpu_seconds?: number | undefined;
    readonly file_size_bytes?: number | undefined;
  };
}

const limit = z.number().int().positive().optional();
const schema: z.ZodType<BwrapSandboxConfig> = z.strictObject({
  bwrap: z.string().min(1).default("bwrap").describe(
    "The bubblewrap binary (name on PATH or absolute path)",
  ),
  network: z.enum(["none", "host"]).default("none").describe(
    'The network: "none" (loopback only, isolated) or "host" (not isolated)',
  ),
  read_only: z.array(z.string().min(1).regex(/^\//, "must be absolute")).default([]).describe(
    "More host paths bound read-only at the same path (e.g. a toolchain in /opt)",
  ),
  limits: z.strictObject({
    processes: limit.describe(
      "Processes of all the sandbox's programs together (a pids cgroup where Terret may create one; else " +
        "RLIMIT_NPROC, which does not bound root)",
    ),
    open_files: limit.describe("RLIMIT_NOFILE per process"),
    memory_bytes: limit.describe("RLIMIT_AS per process, in bytes"),
    cpu_seconds: limit.describe("RLIMIT_CPU per process, in seconds"),
    file_size_bytes: limit.describe("RLIMIT_FSIZE: the largest file a process may write"),
  }).default({}).describe("Resource limits applied with prlimit inside the sandbox"),
});

/**
 * Creates the provider a `sandbox-bwrap` row (or a per-row override naming `bwrap`, e.g. an MCP server's) configures
 * from its parsed config. Like the row, await its `workspaceReady()` before use (that is where it refuses; `isolated`
 * stays false until then), and `dispose()` it when done (it removes its files and its pids cgroup).
 */
export function createBwrapSandbox(
  dirs: readonly string[],
  config: BwrapSandboxConfig,
  probe?: BwrapSandboxOptions["probe"],
): BwrapSandbox {
  const l = config.limits;
  return new BwrapSandbox({
    dirs,
    bwrap: config.bwrap,
    network: config.network,
    readOnly: config.read_only,
    limits: {
      processes: l.processes,
      openFiles: l.open_files,
      memoryBytes: l.memory_bytes,
      cpuSeconds: l.cpu_seconds,
      fileSizeBytes: l.file_size_bytes,
    },
    ...(probe === undefined ? {} : { probe }),
  });
}

/**
 * Provides the `bwrap` sandbox over the granted workspace. At mount it probes bubblewrap and user namespaces and
 * checks the workspace; when either fails the row refuses to mount, saying why and what to use instead.
 *
 * **Permissions**: run of the `bwrap` binary; read of the workspace directories, the system directories it binds
 * (it lists them and the secrets it masks), the `read_only` paths and the binary (a bare `bwrap` is looked up on
 * `PATH`, which needs read of every `PATH` directory and the `PATH` variable); write of `/tmp`, where it keeps the
 * `passwd` and `group` the sandbox sees; `--allow-sys=uid,gid` (the sandbox runs as the host's user). With
 * `limits.processes`: run of `/bin/sh` (which joins the sandbox's pids cgroup before becoming `bwrap`) and write
 * of `/sys/fs/cgroup` (where that cgroup is made; `/proc/self/cgroup` says where).
 */
export const bwrapSandboxPlugin: Plugin<BwrapSandboxConfig> = definePlugin({
  name: "sandbox-bwrap",
  description:
    "Bubblewrap sandbox: each program in its own namespaces, system directories read-only, workspaces read-write",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  config: schema,
  permissions(config, deps): HostPermissions {
    const dirs = grantedDirs(deps);
    const bare = !config.bwrap.includes("/");
    return {
      run: [config.bwrap, ...(config.limits.processes === undefined ? [] : ["/bin/sh"])],
      read: bare || dirs === true ? true : [
        ...dirs,
        ...SYSTEM_PATHS,
        ...config.read_only,
        config.bwrap,
        ...(config.limits.processes === undefined ? [] : ["/proc/self/cgroup", "/sys/fs/cgroup"]),
      ],
      write: ["/tmp", ...(config.limits.processes === undefined ? [] : ["/sys/fs/cgroup"])],
      sys: ["uid", "gid"],
      ...(bare ? { env: ["PATH"] } : {}),
    };
  },
  async apply(ctx, config) {
    const sandbox = createBwrapSandbox(ctx.get(WorkspaceKey).dirs, config);
    ctx.effect(() => () => sandbox.dispose(), "bwrap sandbox files");
    await sandbox.workspaceReady();
    ctx.provide(SandboxKey, sandbox);
  },
});
