/**
 * The `fs` row: provides the `fs` service over the granted workspace, dispatching `fs/authorize`.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { WorkspaceKey } from "@terret/core";
import { z } from "zod";
import { DEFAULT_MAX_SYMLINK_HOPS } from "../containment.ts";
import {
  DEFAULT_MAX_GLOB_VISITS,
  DEFAULT_MAX_READ_BYTES,
  DenoFileSystem,
} from "./deno_file_system.ts";
import { FsAuthorize, FsKey, type FsVerdict } from "./file_system.ts";
import { FsGrantsKey, ReadOnlyGrants } from "./fs_grants.ts";
import { grantedDirs } from "../workspace.ts";

/** Config of the `fs` row. */
export interface FsConfig {
  /** Largest read (and edited file) in bytes. */
  readonly max_read_bytes: number;
  /** Symbolic links followed while resolving one path before it is `Denied`. */
  readonly max_symlink_hops: number;
  /** Directory entries one glob may visit before it stops, truncated. */
  readonly max_glob_visits: number;
}

const schema: z.ZodType<FsConfig> = z.object({
  max_read_bytes: z.number().int().positive().default(DEFAULT_MAX_READ_BYTES).describe(
    "Largest read (and edited file) in bytes; past it reads fail with TooLarge",
  ),
  max_symlink_hops: z.number().int().positive().max(1000).default(DEFAULT_MAX_SYMLINK_HOPS)
    .describe("Symbolic links followed while resolving one path before it is Denied"),
  max_glob_visits: z.number().int().positive().default(DEFAULT_MAX_GLOB_VISITS).describe(
    "Directory entries one glob may visit before it stops and reports truncation",
  ),
});

const ADMIT: FsVerdict = Object.freeze({ allow: true });

/**
 * Provides `fs` contained to the `workspace` service's directories, plus `fs.grants`: directories another row
 * (the `jobs` row, for background job output) grants read-only. Every operation that passes containment is
 * dispatched as `fs/authorize` on this row's context before it runs.
 *
 * **Permissions**: read and write of the directories the `workspace` row grants (taken from that row, so they are
 * written once), and `HOME` (a path an agent gives may start with `~`). Paths outside are never opened: a scoped
 * host answers their inspection with `NotCapable`, which containment reports as `Denied`.
 */
export const fsPlugin: Plugin<FsConfig> = definePlugin({
  name: "fs",
  description: "Workspace-contained file access; every operation passes the fs/authorize waterfall",
  inject: [WorkspaceKey],
  provides: [FsKey, FsGrantsKey],
  config: schema,
  permissions(_config, deps): HostPermissions {
    const dirs = grantedDirs(deps);
    return {
      read: dirs === true ? true : [...dirs],
      write: dirs === true ? true : [...dirs],
      env: ["HOME"],
    };
  },
  apply(ctx, config) {
    const grants = new ReadOnlyGrants();
    const fs = new DenoFileSystem({
      dirs: ctx.get(WorkspaceKey).dirs,
      // The inner step ignores the payload it receives: a listener cannot redirect the operation.
      authorize: (request) => ctx.waterfall(FsAuthorize, request, () => ADMIT),
      maxReadBytes: config.max_read_bytes,
      maxSymlinkHops: config.max_symlink_hops,
      maxGlobVisits: config.max_glob_visits,
      readOnlyDirs: () => grants.readOnlyDirs,
    });
    ctx.provide(FsGrantsKey, grants);
    ctx.provide(FsKey, fs);
  },
});
