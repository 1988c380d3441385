/**
 * Sandbox providers: none, Deno and Docker, the table a row resolves a provider through by name, and the probe
 * that reports which of them a host can run.
 *
 * Import from `@terret/exec/sandbox`.
 *
 * @module
 */
export { type NoneSandboxConfig, noneSandboxPlugin } from "./none.ts";
export { createNoneSandbox } from "./none.ts";
export {
  DEFAULT_SANDBOX_IMAGE,
  DockerSandbox,
  type DockerSandboxConfig,
  type DockerSandboxOptions,
  dockerSandboxPlugin,
} from "./docker.ts";
export {
  DenoSandbox,
  type DenoSandboxConfig,
  type DenoSandboxOptions,
  denoSandboxPlugin,
} from "./deno.ts";
export { type ProbeSandboxOptions, probeSandboxProviders, type SandboxProbe } from "./probe.ts";
export { BOOT_LABEL, HOME_LABEL, type ReapOptions, reapStaleContainers } from "./docker_reap.ts";
export {
  buildSandboxImage,
  type BuildSandboxImageOptions,
  type BuiltSandboxImage,
} from "./build_image.ts";
export {
  buildSandbox,
  SANDBOX_PROVIDERS,
  type SandboxProviderEntry,
  type SandboxProviderFactory,
} from "./sandbox_providers.ts";
