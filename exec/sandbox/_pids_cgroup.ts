/**
 * A pids cgroup bounding every process of one bwrap sandbox (all its spawns together), where the host lets Terret
 * create one below its own cgroup (cgroup v2 with the pids controller delegated, or a writable cgroup v1 pids
 * hierarchy). RLIMIT_NPROC alone does not bound root, whose processes the kernel never counts against it.
 *
 * @module
 */

/** A created pids cgroup. */
export interface PidsCgroup {
  /** The cgroup directory. */
  readonly dir: string;
  /** Kills what is left in it and removes it (best effort, idempotent). */
  remove(): Promise<void>;
}

/**
 * Creates `terret-bwrap-<id>` below this process's own pids cgroup with `pids.max` = `max`.
 *
 * @returns `undefined` when no pids cgroup can be created here (not mounted, read-only, not delegated)
 */
export async function createPidsCgroup(max: number, id: string): Promise<PidsCgroup | undefined> {
  const own = await Deno.readTextFile("/proc/self/cgroup").catch(() => "");
  const candidates: string[] = [];
  for (const line of own.split("\n")) {
    const [, controllers, path] = line.split(":");
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(",").includes("pids")) candidates.push(`/sys/fs/cgroup/pids${path}`);
    if (controllers === "" && line.startsWith("0::")) candidates.push(`/sys/fs/cgroup${path}`);
  }
  for (const parent of candidates) {
    const dir = `${parent.replace(/\/$/, "")}/terret-bwrap-${id}`;
    try {
      await Deno.mkdir(dir);
    } catch {
      continue;
    }
    try {
      await Deno.writeTextFile(`${dir}/pids.max`, String(max));
      return { dir, remove: () => removeCgroup(dir) };
    } catch {
      await Deno.remove(dir).catch(() => {});
    }
  }
  return undefined;
}

async function removeCgroup(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const procs = await Deno.readTextFile(`${dir}/cgroup.procs`).catch(() => undefined);
    if (procs === undefined) return; // gone already
    for (const pid of procs.split("\n").filter((line) => line !== "")) {
      try {
        Deno.kill(Number(pid), "SIGKILL");
      } catch {
        // exited meanwhile
      }
    }
    try {
      await Deno.remove(dir);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20)); // the killed are being reaped
    }
  }
}
