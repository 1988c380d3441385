/**
 * Terret's execution world: the workspace grant, the sandbox providers, and (as they land) the fs, subprocess,
 * shell and terminal seams and the standard tools.
 *
 * @module
 */
export { type WorkspaceConfig, workspacePlugin } from "./workspace.ts";
export { type NoneSandboxConfig, noneSandboxPlugin } from "./sandbox/none.ts";
export { isInside } from "./paths.ts";
export {
  DEFAULT_INHERIT_ENV,
  type SubprocessConfig,
  subprocessPlugin,
  SubprocessRunner,
} from "./process/subprocess.ts";
export {
  type Shell,
  type ShellConfig,
  ShellKey,
  shellPlugin,
  type ShellResult,
  type ShellRunOptions,
  ShellSessions,
} from "./process/shell.ts";
export {
  type TerminalInfo,
  type TerminalOpenOptions,
  type TerminalRead,
  type TerminalReadOptions,
  TerminalRegistry,
  type Terminals,
  type TerminalsConfig,
  TerminalsKey,
  terminalsPlugin,
} from "./process/terminals.ts";
