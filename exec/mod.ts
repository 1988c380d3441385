/**
 * Terret's execution world: the workspace grant, the `fs` seam, the sandbox providers, and (as they land) the
 * subprocess, shell and terminal seams and the standard tools.
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
export {
  type ContainOptions,
  containPath,
  DEFAULT_MAX_SYMLINK_HOPS,
  expandHome,
  resolveReal,
  type ResolveRealOptions,
} from "./containment.ts";
export {
  type DirEntry,
  type EditOptions,
  type EditResult,
  type EntryType,
  type FileStat,
  type FileSystem,
  FsAuthorize,
  type FsAuthorizeRequest,
  type FsCallOptions,
  FsKey,
  type FsOp,
  type FsVerdict,
  type GlobOptions,
  type GlobResult,
  type ListOptions,
  type ListResult,
  type ReadOptions,
  type WriteOptions,
  type WriteResult,
} from "./fs/file_system.ts";
export {
  DEFAULT_MAX_GLOB_VISITS,
  DEFAULT_MAX_READ_BYTES,
  DenoFileSystem,
  type DenoFileSystemOptions,
} from "./fs/deno_file_system.ts";
export { type FsConfig, fsPlugin } from "./fs/fs_plugin.ts";
export {
  compileGlob,
  type CompileGlobOptions,
  hasMagic,
  maxDepth,
  type SplitGlob,
  splitGlob,
} from "./fs/glob.ts";
export { createNoneSandbox } from "./sandbox/none.ts";
export {
  DEFAULT_SANDBOX_IMAGE,
  DockerSandbox,
  type DockerSandboxConfig,
  type DockerSandboxOptions,
  dockerSandboxPlugin,
} from "./sandbox/docker.ts";
export {
  BOOT_LABEL,
  HOME_LABEL,
  type ReapOptions,
  reapStaleContainers,
} from "./sandbox/docker_reap.ts";
export {
  DenoSandbox,
  type DenoSandboxConfig,
  type DenoSandboxOptions,
  denoSandboxPlugin,
} from "./sandbox/deno.ts";
export {
  type ProbeSandboxOptions,
  probeSandboxProviders,
  type SandboxProbe,
} from "./sandbox/probe.ts";
export {
  createStdToolsPlugin,
  type StdToolsConfig,
  stdToolsConfig,
  stdToolsPlugin,
  type StdToolsPluginOptions,
} from "./tools/std_tools_plugin.ts";
export {
  createReadTool,
  DEFAULT_READ_OPTIONS,
  type ReadArgs,
  type ReadToolOptions,
} from "./tools/read_tool.ts";
export { createWriteTool, type WriteArgs } from "./tools/write_tool.ts";
export { createEditTool, type EditArgs } from "./tools/edit_tool.ts";
export { createGlobTool, GLOB_MAX_RESULTS, type GlobArgs } from "./tools/glob_tool.ts";
export {
  createGrepTool,
  DEFAULT_GREP_OPTIONS,
  type GrepArgs,
  type GrepToolOptions,
} from "./tools/grep_tool.ts";
export {
  bashApproval,
  type BashArgs,
  type BashToolOptions,
  createBashTool,
} from "./tools/bash_tool.ts";
export {
  createTerminalOpenTool,
  TERMINAL_NAME,
  type TerminalOpenArgs,
} from "./tools/terminal_open_tool.ts";
export { createTerminalInputTool, type TerminalInputArgs } from "./tools/terminal_input_tool.ts";
export {
  createTerminalReadTool,
  MAX_TERMINAL_WAIT_MS,
  type TerminalReadArgs,
} from "./tools/terminal_read_tool.ts";
export { createTerminalCloseTool, type TerminalCloseArgs } from "./tools/terminal_close_tool.ts";
export {
  createWebFetchTool,
  DEFAULT_WEB_FETCH_OPTIONS,
  type WebFetchArgs,
  type WebFetchHooks,
  type WebFetchOptions,
} from "./tools/web_fetch_tool.ts";
