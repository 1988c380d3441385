/**
 * The `workspace` seam: the directories an agent is granted. The `fs` seam contains every path to them and the
 * sandbox providers mount or permit exactly them.
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";

/**
 * The granted workspace directories.
 *
 * Contract: `dirs` are absolute, real (symlink-resolved) paths of existing directories; an empty list grants
 * nothing (every path is denied). A fork may shadow the service to grant one agent a different list.
 */
export interface Workspace {
  readonly dirs: readonly string[];
}

/** The workspace service key (config row `workspace`). */
export const WorkspaceKey: ServiceKey<Workspace> = defineService<Workspace>(
  "workspace",
  "The directories agents are granted",
);
