/**
 * The `home` doctor check: the Terret home and what it stores (the session database and its `-wal`/`-shm`, the
 * socket token, the credential store, the serve lock) must be the owner's alone. `trt serve` creates them that way
 * (home and store directories 0700, files 0600); this check warns when an existing one is wider (the home only
 * once it holds a store).
 *
 * @module
 */
import { join } from "node:path";
import type { DoctorCheck, DoctorFinding } from "./doctor.ts";

/** Directories under the home whose entries hold secrets or session data. */
const PRIVATE_DIRS: readonly string[] = Object.freeze(["sessions", "ws", "credentials"]);

/** Warns for the home, and every entry of its private directories, that a group or other users may access. */
export const homeCheck: DoctorCheck = {
  name: "home",
  description: "the Terret home and its stores are readable by their owner only",
  atServe: true,
  async run(input) {
    const home = input.resolved.home;
    const paths: string[] = [];
    for (const dir of PRIVATE_DIRS) {
      const path = join(home, dir);
      if (!(await exists(path))) continue;
      paths.push(path);
      for await (const entry of Deno.readDir(path)) {
        if (!entry.isSymlink) paths.push(join(path, entry.name));
      }
    }
    // The home itself matters once it holds a store (a fresh, empty directory holds nothing yet).
    if (paths.length > 0) paths.unshift(home);
    paths.push(join(home, "serve.lock"));
    const findings: DoctorFinding[] = [];
    for (const path of paths) {
      const info = await Deno.lstat(path).catch(() => undefined);
      if (info?.mode === null || info?.mode === undefined) continue;
      const mode = info.mode & 0o777;
      if ((mode & 0o077) === 0) continue;
      const want = info.isDirectory ? "700" : "600";
      findings.push({
        level: "warning",
        check: "home",
        message: `"${path}" has mode ${mode.toString(8).padStart(4, "0")}: other users may ${
          info.isDirectory ? "list and enter it" : "read it"
        }, and it holds session data or secrets (chmod ${want} "${path}")`,
      });
    }
    return findings;
  },
};

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.lstat(path)).isDirectory;
  } catch (error) {
    // Absent, or outside what a scoped host may read (that host's stores are checked by `trt doctor`).
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotCapable) {
      return false;
    }
    throw error;
  }
}
