/**
 * The workspace grant and the `fs` seam: the workspace plugin, the `FileSystem` contract and its Deno implementation, path containment and glob compilation.
 *
 * Import from `@terret/exec/fs`.
 *
 * @module
 */
export { type WorkspaceConfig, workspacePlugin } from "../workspace.ts";
export {
  type ContainOptions,
  containPath,
  DEFAULT_MAX_SYMLINK_HOPS,
  expandHome,
  resolveReal,
  type ResolveRealOptions,
} from "../containment.ts";
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
} from "./file_system.ts";
export {
  DEFAULT_MAX_GLOB_VISITS,
  DEFAULT_MAX_READ_BYTES,
  DenoFileSystem,
  type DenoFileSystemOptions,
} from "./deno_file_system.ts";
export { type FsConfig, fsPlugin } from "./fs_plugin.ts";
export { type FsGrants, FsGrantsKey, ReadOnlyGrants } from "./fs_grants.ts";
export {
  compileGlob,
  type CompileGlobOptions,
  hasMagic,
  maxDepth,
  type SplitGlob,
  splitGlob,
} from "./glob.ts";
