/**
 * The filesystem view and argv of the `bwrap` provider: which host directories are bound read-only, which secrets
 * under them are masked, which environment variables must not reach the host-side `bwrap` process, and the argv
 * itself.
 *
 * @module
 */
import { dirname } from "node:path";
import { isInside } from "../paths.ts";

/** Host system directories bound read-only at the same path (a symbolic link is recreated as a link). */
export const SYSTEM_PATHS: readonly string[] = Object.freeze([
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
]);

/**
 * Secrets under the bound system directories that the sandbox never sees: a file is replaced by an empty one, a
 * directory by an empty read-only tmpfs. `*` matches within one path segment.
 */
export const SECRET_PATHS: readonly string[] = Object.freeze([
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/etc/security/opasswd",
  "/etc/ssh/ssh_host_*_key",
  "/etc/ssl/private",
  "/etc/krb5.keytab",
  "/etc/NetworkManager/system-connections",
  "/etc/wireguard",
  "/etc/docker/key.json",
  "/etc/credstore",
  "/etc/credstore.encrypted",
]);

/** Paths a workspace directory may not be, contain or sit inside: the sandbox builds them itself. */
export const RESERVED_PATHS: readonly string[] = Object.freeze(["/proc", "/dev"]);

/**
 * Variables that steer the dynamic loader, libc or a shell: they are handed to the program with `--setenv` (inside
 * the sandbox), never put in the environment of the host-side `bwrap` process, where they would run code on the
 * host before anything is contained.
 */
export const HOST_STEERING_ENV: RegExp =
  /^(?:LD_\w*|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_\w*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|IFS|CDPATH|GLOBIGNORE|POSIXLY_CORRECT)$/;

/** One system path as it is on the host. */
export type SystemEntry =
  | { readonly kind: "dir"; readonly path: string }
  | { readonly kind: "link"; readonly path: string; readonly target: string };

/** One secret to mask, at its real location. */
export interface SecretEntry {
  readonly kind: "file" | "dir";
  readonly path: string;
}

/** Resource limits applied with `prlimit` inside the sandbox. */
export interface BwrapLimits {
  /**
   * Processes of all the sandbox's programs together: a pids cgroup where Terret may create one, and RLIMIT_NPROC
   * per program (which the kernel does not apply to root).
   */
  readonly processes?: number | undefined;
  /** RLIMIT_NOFILE: open files per process. */
  readonly openFiles?: number | undefined;
  /** RLIMIT_AS in bytes: address space per process. */
  readonly memoryBytes?: number | undefined;
  /** RLIMIT_CPU in seconds: CPU time per process. */
  readonly cpuSeconds?: number | undefined;
  /** RLIMIT_FSIZE in bytes: the largest file a process may write. */
  readonly fileSizeBytes?: number | undefined;
}

/** Reads which system paths exist on this host and how. */
export async function systemEntries(paths: readonly string[]): Promise<SystemEntry[]> {
  const entries: SystemEntry[] = [];
  for (const path of paths) {
    const info = await Deno.lstat(path).catch(() => undefined);
    if (info === undefined) continue;
    if (info.isSymlink) entries.push({ kind: "link", path, target: await Deno.readLink(path) });
    else if (info.isDirectory) entries.push({ kind: "dir", path });
  }
  return entries;
}

/**
 * Finds the secrets that exist under the bound directories, at their real paths (a secret reached through a link
 * is masked where the link leads, when that is inside a bound directory; elsewhere the sandbox cannot see it).
 */
export async function secretEntries(
  patterns: readonly string[],
  bound: readonly string[],
): Promise<SecretEntry[]> {
  const found = new Map<string, SecretEntry>();
  for (const pattern of patterns) {
    for (const path of await expand(pattern)) {
      const real = await Deno.realPath(path).catch(() => undefined);
      if (real === undefined || !bound.some((dir) => isInside(real, dir))) continue;
      const info = await Deno.stat(real).catch(() => undefined);
      if (info === undefined) continue;
      found.set(real, { kind: info.isDirectory ? "dir" : "file", path: real });
    }
  }
  return [...found.values()].sort((a, b) => a.path.localeCompare(b.path));
}

async function expand(pattern: string): Promise<string[]> {
  if (!pattern.includes("*")) return [pattern];
  const dir = dirname(pattern);
  const name = pattern.slice(dir.length + 1);
  const re = new RegExp(`^${name.split("*").map(escapeRegExp).join("[^/]*")}$`);
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (re.test(entry.name)) out.push(`${dir}/${entry.name}`);
    }
  } catch {
    // no such directory: nothing to mask
  }
  return out.sort();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/** What {@linkcode bwrapArgs} builds from. */
export interface BwrapArgsInput {
  readonly system: readonly SystemEntry[];
  readonly secrets: readonly SecretEntry[];
  /** Workspace directories, bound read-write at their real paths. */
  readonly dirs: readonly string[];
  /** Extra host paths bound read-only at the same path. */
  readonly readOnly: readonly string[];
  readonly network: "none" | "host";
  readonly cwd: string;
  /** With a terminal the program keeps the PTY as its controlling terminal (no `--new-session`). */
  readonly tty: boolean;
  /** Variables set inside the sandbox only (see {@linkcode HOST_STEERING_ENV}). */
  readonly setenv: Readonly<Record<string, string>>;
  /**
   * Host files standing in for `/etc/passwd` and `/etc/group` (see {@linkcode identityFiles}), and an empty file
   * bound over each secret file.
   */
  readonly identity: { readonly passwd: string; readonly group: string; readonly empty: string };
  /** The `prlimit` binary and the limits, when any is set. */
  readonly prlimit?: { readonly path: string; readonly limits: BwrapLimits } | undefined;
}

/** The `bwrap` arguments (after the binary) that run `argv` contained. */
export function bwrapArgs(input: BwrapArgsInput, argv: readonly string[]): string[] {
  const args = ["--unshare-all"];
  if (input.network === "host") args.push("--share-net");
  args.push("--die-with-parent");
  if (!input.tty) args.push("--new-session");
  args.push("--cap-drop", "ALL", "--hostname", "terret-sandbox");
  for (const entry of input.system) {
    if (entry.kind === "link") args.push("--symlink", entry.target, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  // After the private /tmp, so a path under /tmp is not hidden by it.
  for (const path of input.readOnly) args.push("--ro-bind", path, path);
  for (const dir of input.dirs) args.push("--bind", dir, dir);
  // Masks last, so a workspace holding a system path does not uncover a secret.
  for (const secret of input.secrets) {
    if (secret.kind === "dir") args.push("--tmpfs", secret.path, "--remount-ro", secret.path);
    else args.push("--ro-bind", input.identity.empty, secret.path);
  }
  args.push("--ro-bind", input.identity.passwd, "/etc/passwd");
  args.push("--ro-bind", input.identity.group, "/etc/group");
  for (const [name, value] of Object.entries(input.setenv)) args.push("--setenv", name, value);
  args.push("--chdir", input.cwd, "--");
  const limits = input.prlimit === undefined ? [] : prlimitArgs(input.prlimit.limits);
  if (limits.length > 0) args.push(input.prlimit!.path, ...limits, "--");
  args.push(...argv);
  return args;
}

function prlimitArgs(limits: BwrapLimits): string[] {
  const out: string[] = [];
  const add = (flag: string, value: number | undefined) => {
    if (value !== undefined) out.push(`--${flag}=${value}`);
  };
  add("nproc", limits.processes);
  add("nofile", limits.openFiles);
  add("as", limits.memoryBytes);
  add("cpu", limits.cpuSeconds);
  add("fsize", limits.fileSizeBytes);
  return out;
}

/**
 * The `/etc/passwd` and `/etc/group` the sandbox sees: only the host's entries for root, the given user and group,
 * and nobody, so names resolve (`id`, `ls -l`) without listing the host's accounts.
 */
export function identityFiles(
  passwd: string,
  group: string,
  uid: number,
  gid: number,
): { passwd: string; group: string } {
  const keep = (text: string, ids: readonly number[]) =>
    text.split("\n").filter((line) => ids.includes(Number(line.split(":")[2] ?? "x"))).map((line) =>
      `${line}\n`
    ).join("");
  return {
    passwd: keep(passwd, [0, uid, 65534]),
    group: keep(group, [0, gid, 65534]),
  };
}
