/**
 * `trt sandbox build`: builds the image the profile's docker `sandbox` row names, from the host's own binaries and
 * without a registry (the one command `serve` and `doctor` point at when the image is missing).
 *
 * @module
 */
import { buildSandboxImage, DEFAULT_SANDBOX_IMAGE } from "@terret/exec/sandbox";
import { prepareRow } from "@terret/terret";
import type { VerbContext } from "./trt.ts";

/** The actions of `trt sandbox`. */
export const SANDBOX_ACTIONS: readonly string[] = Object.freeze(["build"]);

/**
 * Runs `trt sandbox <action>`.
 *
 * @returns 0 the image exists (built now or already there), 1 the build failed, 2 a usage error or a profile whose
 * sandbox row is not the docker provider
 */
export async function sandboxVerb(context: VerbContext, action: string): Promise<number> {
  const { io } = context;
  if (!SANDBOX_ACTIONS.includes(action)) {
    io.stderr(`trt sandbox: unknown action "${action}" (usage: trt sandbox build [--force])\n`);
    return 2;
  }
  const resolved = await context.resolve();
  const row = resolved.rows.find((candidate) => candidate.id === "sandbox");
  if (row === undefined || row.disabled || row.plugin !== "sandbox-docker") {
    io.stderr(
      `trt sandbox: Cannot build an image: row "sandbox" of profile "${context.profile}" ${
        row === undefined || row.disabled
          ? "is not enabled"
          : `uses "${row.plugin}", which needs none`
      } (only sandbox-docker runs programs in an image)\n`,
    );
    return 2;
  }
  const prepared = await prepareRow(resolved, row, { env: context.io.env });
  const image = (prepared.parsed as { image?: string }).image ?? DEFAULT_SANDBOX_IMAGE;
  io.stderr(`trt sandbox: building "${image}" from this host's binaries (no registry)\n`);
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME"]) {
    const value = io.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const built = await buildSandboxImage(image, {
    env,
    force: context.args.booleans.has("force"),
    onLog: (line) => io.stderr(`  ${line}\n`),
    ...(io.signal === undefined ? {} : { signal: io.signal }),
  });
  if (!built.ok) {
    io.stderr(`trt sandbox: Cannot build "${image}": ${built.last} (exit ${built.code})\n`);
    return 1;
  }
  io.stdout(`${image}\n`);
  return 0;
}
