/**
 * The first-party plugins rows can name without declaring a module: statically imported, so a compiled `trt` needs
 * no dynamic import to find them. Adding a first-party plugin is one entry here; enabling its row in
 * `bundles/base.yml` is deleting its `disabled: true` line.
 *
 * @module
 */
import type { PluginLike } from "@terret/hames";
import {
  denoSandboxPlugin,
  dockerSandboxPlugin,
  fsPlugin,
  noneSandboxPlugin,
  shellPlugin,
  subprocessPlugin,
  terminalsPlugin,
  workspacePlugin,
} from "@terret/exec";

/**
 * Every built-in plugin: the execution world (`workspace`, `fs`, the sandbox providers `sandbox-docker`,
 * `sandbox-deno` and `sandbox-none`, `subprocess`, `shell`, `terminals`). Still to land (their base rows are
 * disabled until then): `terret-llm-openrouter` (`llm.main`), `terret-sessions-sqlite` (`sessions.store`),
 * `terret-tools-std` (`tools.std`), `terret-tools-allow` (`tools.allow`), `terret-approvals` (`approvals`) and
 * `terret-ws` (`interfaces.ws`).
 */
export const BUILTIN_PLUGINS: readonly PluginLike[] = Object.freeze([
  workspacePlugin,
  fsPlugin,
  dockerSandboxPlugin,
  denoSandboxPlugin,
  noneSandboxPlugin,
  subprocessPlugin,
  shellPlugin,
  terminalsPlugin,
]);
