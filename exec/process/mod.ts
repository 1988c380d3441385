/**
 * Processes: the `subprocess` runner, persistent shells, interactive terminals and background jobs.
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
export {
  type JobHost,
  type JobInfo,
  type JobOwner,
  JobRegistry,
  type Jobs,
  JobsKey,
  type JobStartOptions,
} from "./jobs.ts";
export { type JobsConfig, jobsPlugin } from "./jobs_plugin.ts";
export {
  JOB_EVENTS,
  JobEnded,
  type JobEndedPayload,
  JobStarted,
  type JobStartedPayload,
} from "./job_events.ts";
