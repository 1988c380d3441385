/**
 * Stale sandbox containers: a `trt serve` killed with SIGKILL cannot remove its container, which keeps running what
 * an agent started. Every container is labelled with the Terret home and the boot that started it; the next boot on
 * the same home (and `trt doctor`, when no server holds the home) removes the containers of that home that belong
 * to another boot.
 *
 * @module
 */
import { resolveExecutable, runHostCommand } from "./_host_command.ts";
import { clientEnv } from "./docker.ts";

/** The label naming the Terret home a sandbox container belongs to. */
export const HOME_LABEL = "org.terret.sandbox.home";
/** The label naming the boot (one id per sandbox row mount) that started a container. */
export const BOOT_LABEL = "org.terret.sandbox.boot";

/** Options for {@linkcode reapStaleContainers}. */
export interface ReapOptions {
  /** The docker CLI (name on `PATH` or absolute path). */
  readonly docker: string;
  /** The Terret home whose containers are considered. */
  readonly home: string;
  /** The current boot's id: its containers are kept. */
  readonly keepBoot?: string;
  /** The longest one docker call may take (default 15 s). */
  readonly timeoutMs?: number;
}

/**
 * Removes (`docker rm -f`) every container labelled with `home` whose boot label is not `keepBoot`, and returns
 * their names, sorted.
 *
 * Contract: only containers carrying this exact home label are touched, never another home's or an unlabelled one;
 * the caller guarantees no other live server uses the home (the home lock). It throws when the docker CLI cannot
 * be run or fails (the caller decides whether that matters).
 *
 * @throws {Error} naming the docker call that failed
 */
export async function reapStaleContainers(options: ReapOptions): Promise<string[]> {
  const docker = await resolveExecutable(options.docker);
  const env = clientEnv();
  const timeoutMs = options.timeoutMs ?? 15_000;
  const listed = await runHostCommand(docker, [
    "ps",
    "-a",
    "--filter",
    `label=${HOME_LABEL}=${options.home}`,
    "--format",
    `{{.Names}}\t{{.Label "${BOOT_LABEL}"}}`,
  ], { env, timeoutMs });
  if (listed.code !== 0) {
    throw new Error(`Cannot list the sandbox containers: ${listed.stderr.trim() || listed.code}`);
  }
  const stale = listed.stdout.split("\n").filter((line) => line !== "").map((line) =>
    line.split("\t")
  ).filter(([, boot]) => boot !== options.keepBoot).map(([name]) => name!).sort();
  if (stale.length === 0) return [];
  const removed = await runHostCommand(docker, ["rm", "-f", ...stale], { env, timeoutMs });
  if (removed.code !== 0) {
    throw new Error(
      `Cannot remove the stale sandbox containers ${stale.join(", ")}: ${
        removed.stderr.trim() || removed.code
      }`,
    );
  }
  return stale;
}
