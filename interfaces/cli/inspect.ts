/**
 * The inspecting verbs: `dump-config`, `doctor` and `permissions`. None of them boots the profile.
 *
 * @module
 */
import {
  dumpConfig,
  permissionFlags,
  type PermissionPlan,
  planPermissions,
  prepareRows,
  type ResolvedProfile,
  runDoctor,
} from "@terret/terret";
import type { VerbContext } from "./trt.ts";

/** `trt dump-config`: the resolved tree, annotated, tags unresolved. */
export async function dumpConfigVerb(context: VerbContext): Promise<number> {
  context.io.stdout(dumpConfig(await context.resolve()));
  return 0;
}

/** `trt doctor`: every check's findings; exit 2 when any is an error. */
export async function doctorVerb(context: VerbContext): Promise<number> {
  const { io } = context;
  let resolved: ResolvedProfile;
  try {
    resolved = await context.resolve();
  } catch (error) {
    io.stdout(`error  profile  ${(error as Error).message}\n`);
    io.stderr("trt doctor: 1 error\n");
    return 2;
  }
  io.stdout(`profile "${resolved.profile.name}" (${resolved.profile.file})\n`);
  const findings = await runDoctor(
    { resolved, env: io.env, allowConfigCode: context.allowConfigCode },
    context.checks,
    context.io.signal === undefined ? {} : { signal: context.io.signal },
  );
  for (const finding of findings) {
    const subject = finding.row === undefined ? finding.check : `${finding.check} ${finding.row}`;
    io.stdout(`${finding.level.padEnd(8)}${subject}: ${finding.message}\n`);
  }
  const errors = findings.filter((finding) => finding.level === "error").length;
  const warnings = findings.filter((finding) => finding.level === "warning").length;
  io.stderr(
    errors > 0
      ? `trt doctor: ${errors} ${errors === 1 ? "error" : "errors"}, ${warnings} ${
        warnings === 1 ? "warning" : "warnings"
      }\n`
      : `trt doctor: no errors, ${warnings} ${warnings === 1 ? "warning" : "warnings"}\n`,
  );
  return errors > 0 ? 2 : 0;
}

/** `trt permissions`: the flags (one per line), or the plan as JSON. */
export async function permissionsVerb(context: VerbContext): Promise<number> {
  const plan = await profilePlan(context);
  if (context.args.booleans.has("json")) {
    context.io.stdout(`${JSON.stringify({ flags: permissionFlags(plan), ...plan }, null, 2)}\n`);
  } else {
    context.io.stdout(permissionFlags(plan).map((flag) => `${flag}\n`).join(""));
  }
  return 0;
}

/** Resolves and prepares the profile (loading plugins, materialising tags) and plans its permissions. */
export async function profilePlan(
  context: VerbContext,
  resolved?: ResolvedProfile,
): Promise<PermissionPlan> {
  const profile = resolved ?? await context.resolve();
  const prepared = await prepareRows(profile, {
    env: context.io.env,
    allowConfigCode: context.allowConfigCode,
  });
  return planPermissions(profile, prepared, { env: context.io.env });
}
