/**
 * Processes: the `subprocess` runner, persistent shells and interactive terminals.
 *
 * Import from `@terret/exec/process`.
 *
 * @module
 */
export {
  DEFAULT_INHERIT_ENV,
  type SubprocessConfig,
  subprocessPlugin,
  SubprocessRunner,
} from "./subprocess.ts";
export {
  type Shell,
  type ShellConfig,
  ShellKey,
  shellPlugin,
  type ShellResult,
  type ShellRunOptions,
  ShellSessions,
} from "./shell.ts";
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
} from "./terminals.ts";
