/**
 * Terret's execution world: the workspace grant, the sandbox providers, and (as they land) the fs, subprocess,
 * shell and terminal seams and the standard tools.
 *
 * @module
 */
export { type WorkspaceConfig, workspacePlugin } from "./workspace.ts";
export { type NoneSandboxConfig, noneSandboxPlugin } from "./sandbox/none.ts";
export { isInside } from "./paths.ts";
