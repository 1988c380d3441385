/**
 * The bwrap test lane's gate: bubblewrap installed and able to create an unprivileged user namespace here. Tests
 * that need it pass the returned reason to `ignore`; locally a skip is loud, in CI (`.ci/run` installs
 * `bubblewrap`) it fails.
 *
 * @module
 */
import { probeBwrap } from "@terret/exec/sandbox";
import { skipLane } from "./lane.ts";

/** Why the bwrap lane cannot run here, or `undefined` when it can. */
export async function bwrapLane(): Promise<string | undefined> {
  const found = await probeBwrap();
  return found.ok ? undefined : skipLane("bwrap", found.reason);
}
