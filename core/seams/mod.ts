/**
 * The seams core consumes from the execution world and exec implements: `sandbox`, `subprocess` and `workspace`.
 *
 * Import from `@terret/core/seams`.
 *
 * @module
 */
export {
  type ConfinementRequest,
  type Sandbox,
  type SandboxGrants,
  SandboxKey,
  type WrapOptions,
  type WrappedCommand,
} from "./sandbox.ts";
export {
  type ChildExit,
  type ChildHandle,
  type ExitStatus,
  type ProcessOptions,
  type PtyHandle,
  type PtySpawnOptions,
  type RunOptions,
  type RunResult,
  type SpawnOptions,
  type Subprocess,
  SubprocessKey,
} from "./subprocess.ts";
export { type Workspace, WorkspaceKey } from "./workspace.ts";
