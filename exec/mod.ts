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
