/**
 * The `interfaces.acp` row (plugin `terret-acp`): what `trt acp` lets an editor do beyond the protocol's baseline.
 * Mounting it serves nothing; `trt acp` reads its config.
 *
 * @module
 */
import { definePlugin, defineService, type Plugin, type ServiceKey } from "@terret/hames";
import { z } from "zod";

/** The `interfaces.acp` row's config. */
export interface AcpConfig {
  /**
   * Let Read, Write and Edit go through the editor (`fs/read_text_file`, `fs/write_text_file`) when it offers them:
   * unsaved buffers are read and edits show in the editor. Containment applies before any request. Default false.
   */
  readonly client_fs: boolean;
  /**
   * Let Bash run in the editor's terminal (`terminal/*`) when it offers one: outside Terret's sandbox, in the
   * editor's environment. Default false (Bash runs in Terret's shell, under the sandbox row).
   */
  readonly client_terminal: boolean;
}

/** The `interfaces.acp` row's config schema. */
export const acpConfig: z.ZodType<AcpConfig, unknown> = z.strictObject({
  client_fs: z.boolean().default(false).describe(
    "Read, Write and Edit go through the editor's fs methods when it offers them (unsaved buffers are read, " +
      "edits show in the editor); containment is checked before any request",
  ),
  client_terminal: z.boolean().default(false).describe(
    "Bash runs in the editor's terminal when it offers one: outside Terret's sandbox, in the editor's " +
      "environment (default: Terret's shell under the sandbox row)",
  ),
}) as unknown as z.ZodType<AcpConfig, unknown>;

/** The service holding the `interfaces.acp` row's config (what `trt acp` reads). */
export const AcpConfigKey: ServiceKey<AcpConfig> = defineService<AcpConfig>(
  "acp.config",
  "The interfaces.acp row's config: the editor capabilities trt acp may use",
);

/**
 * The `terret-acp` plugin (row `interfaces.acp`): provides its config as {@linkcode AcpConfigKey}. It binds nothing
 * and needs no host permission: `trt acp` serves stdio.
 */
export const acpPlugin: Plugin<AcpConfig> = definePlugin({
  name: "terret-acp",
  description:
    "Settings for trt acp (editors over the Agent Client Protocol): client fs and terminal, both off by default",
  provides: [AcpConfigKey],
  config: acpConfig,
  permissions: () => ({}),
  apply(ctx, config) {
    ctx.provide(AcpConfigKey, config);
  },
});
