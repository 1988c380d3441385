/**
 * Terret's execution world, the names a host or plugin author needs: the plugins that mount the workspace grant,
 * the `fs` seam, the sandbox providers, the subprocess, shell, terminal and jobs seams and the standard tools, with
 * their service keys. Each concept has its own entry with its full surface: `@terret/exec/fs`, `/sandbox`,
 * `/process` and `/tools`.
 *
 * @module
 */
export { EXEC_ERROR_CODES, EXEC_ERRORS, type ExecErrorCode } from "./errors.ts";
export { type FileSystem, FsAuthorize, FsKey, fsPlugin, workspacePlugin } from "./fs/mod.ts";
export {
  bwrapSandboxPlugin,
  denoSandboxPlugin,
  dockerSandboxPlugin,
  noneSandboxPlugin,
  probeSandboxProviders,
} from "./sandbox/mod.ts";
export {
  type Jobs,
  JobsKey,
  jobsPlugin,
  type Shell,
  ShellKey,
  shellPlugin,
  subprocessPlugin,
  type Terminals,
  TerminalsKey,
  terminalsPlugin,
} from "./process/mod.ts";
export { stdToolsPlugin } from "./tools/mod.ts";
