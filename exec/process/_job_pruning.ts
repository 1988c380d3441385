/**
 * Pruning the jobs directory: output files (`<root>/<agent_id>/<job_id>.log`) of jobs no longer listed, last written
 * longer ago than the row's `retain_hours`. Internal to the jobs row.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { join } from "node:path";

/**
 * Removes every `<root>/<agent>/<name>.log` last modified before `before` (epoch milliseconds) whose path is not in
 * `listed`; returns how many it removed. Never rejects: a directory or file it cannot read or remove is logged
 * (`warn`) and skipped, so one bad entry does not keep the rest.
 */
export async function pruneJobOutputs(
  root: string,
  before: number,
  listed: ReadonlySet<string>,
  logger: Logger,
): Promise<number> {
  let removed = 0;
  let agents: Deno.DirEntry[];
  try {
    agents = await Array.fromAsync(Deno.readDir(root));
  } catch (error) {
    logger.log("warn", `Cannot prune old job output in "${root}"`, { error });
    return 0;
  }
  for (const agent of agents) {
    if (!agent.isDirectory) continue;
    const dir = join(root, agent.name);
    try {
      for await (const file of Deno.readDir(dir)) {
        if (!file.isFile || !file.name.endsWith(".log")) continue;
        const path = join(dir, file.name);
        if (listed.has(path)) continue;
        const mtime = (await Deno.lstat(path)).mtime?.getTime();
        if (mtime === undefined || mtime >= before) continue;
        await Deno.remove(path);
        removed++;
      }
    } catch (error) {
      logger.log("warn", `Cannot prune old job output in "${dir}"`, { error });
    }
  }
  return removed;
}
