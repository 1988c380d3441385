/**
 * `doctor`: checks a resolved profile without booting it. Checks are a pluggable list: the composition checks ship
 * here (every row's plugin, consent, tags and schema; the permissions it would need), and other packages add
 * theirs (the execution world adds which sandbox providers work on this machine).
 *
 * @module
 */
import { homeCheck } from "./home_check.ts";
import { isTerretError, type PluginLike } from "@terret/hames";
import type { EnvReader } from "./config_tag.ts";
import { planPermissions } from "./host_permissions.ts";
import { type PreparedRow, prepareRow } from "./prepare.ts";
import type { ResolvedProfile } from "./resolve.ts";

/** How serious a finding is: any `error` makes doctor fail. */
export type FindingLevel = "error" | "warning" | "ok" | "info";

/** One result of a check. */
export interface DoctorFinding {
  /** Its level. */
  readonly level: FindingLevel;
  /** The check that produced it. */
  readonly check: string;
  /** The row it is about, if any. */
  readonly row?: string;
  /** One sentence. */
  readonly message: string;
}

/** What a check sees. */
export interface DoctorInput {
  /** The resolved profile. */
  readonly resolved: ResolvedProfile;
  /** The environment `!env` tags read. */
  readonly env: EnvReader;
  /** The operator's consent to import plugins named by path or URL. */
  readonly allowConfigCode: boolean;
  /** Rows prepared by the checks before this one (the rows check fills it; later checks read it). */
  readonly prepared: PreparedRow[];
  /**
   * True when the check runs as `trt serve` boots, where only its warnings and errors are shown: it may skip probes
   * whose findings would only inform (the sandbox check probes only the sandbox row's provider).
   */
  readonly atServe?: boolean;
}

/**
 * One doctor check.
 *
 * Contract: `run` inspects and probes; it must not boot the profile, mount plugins, or import a module the
 * operator did not consent to, and it reports problems as findings rather than throwing (a throw is reported as
 * an error finding naming the check). `atServe` checks also run when `trt serve` boots and print their warnings
 * and errors (this is how `serve` says it runs unsandboxed and which row to patch).
 */
export interface DoctorCheck {
  /** A short name (`rows`, `permissions`, `sandbox`). */
  readonly name: string;
  /** One line saying what it checks. */
  readonly description: string;
  /** Also run at `serve` time. */
  readonly atServe?: boolean;
  /** Runs the check. */
  run(input: DoctorInput, options?: { signal?: AbortSignal }): Promise<readonly DoctorFinding[]>;
}

/** Every row: its plugin exists and may be loaded, its tags resolve, its config passes the plugin's schema. */
export const rowsCheck: DoctorCheck = {
  name: "rows",
  description: "every row's plugin, tags and config",
  async run(input) {
    const findings: DoctorFinding[] = [];
    const cache = new Map<string, Promise<PluginLike>>();
    for (const row of input.resolved.rows) {
      const source = input.resolved.plugins.get(row.plugin);
      if (row.disabled && (source === undefined || source.consent !== undefined)) {
        findings.push({
          level: "info",
          check: "rows",
          row: row.id,
          message: source === undefined
            ? `disabled; its plugin "${row.plugin}" is not available in this build`
            : `disabled; not checked (its plugin needs --allow-config-code)`,
        });
        continue;
      }
      try {
        const prepared = await prepareRow(input.resolved, row, {
          env: input.env,
          allowConfigCode: input.allowConfigCode,
        }, cache);
        if (!row.disabled) input.prepared.push(prepared);
        findings.push({
          level: row.disabled ? "info" : "ok",
          check: "rows",
          row: row.id,
          message: row.disabled
            ? `disabled; config valid for "${row.plugin}"`
            : `config valid (${row.plugin})`,
        });
      } catch (error) {
        if (!isTerretError(error)) throw error;
        findings.push(
          row.disabled
            ? {
              level: "warning",
              check: "rows",
              row: row.id,
              message: `disabled; would fail: ${error.message}`,
            }
            : { level: "error", check: "rows", row: row.id, message: error.message },
        );
      }
    }
    return findings;
  },
};

/** The permissions the enabled rows declare; a grant of a whole category is a warning. */
export const permissionsCheck: DoctorCheck = {
  name: "permissions",
  description: "the host permissions the profile needs",
  run(input) {
    const findings: DoctorFinding[] = [];
    const plan = planPermissions(input.resolved, input.prepared, { env: input.env });
    for (const [kind, grant] of Object.entries(plan.grants)) {
      if (!grant.unscoped) continue;
      findings.push({
        level: "warning",
        check: "permissions",
        message: `unscoped --allow-${kind} requested by ${
          grant.unscopedBy.map((id) => `"${id}"`).join(", ")
        }; --scoped cannot narrow it`,
      });
    }
    if (findings.length === 0) {
      findings.push({ level: "ok", check: "permissions", message: "every grant is scoped" });
    }
    return Promise.resolve(findings);
  },
};

/** The composition checks, in order. Other packages append theirs (see {@linkcode DoctorCheck}). */
export const COMPOSITION_CHECKS: readonly DoctorCheck[] = Object.freeze([
  rowsCheck,
  permissionsCheck,
  homeCheck,
]);

/**
 * Runs `checks` in order; a check that throws becomes an error finding naming it.
 *
 * @returns every finding, in check order
 */
export async function runDoctor(
  input: Omit<DoctorInput, "prepared">,
  checks: readonly DoctorCheck[],
  options: { signal?: AbortSignal } = {},
): Promise<DoctorFinding[]> {
  const shared: DoctorInput = { ...input, prepared: [] };
  const findings: DoctorFinding[] = [];
  for (const check of checks) {
    options.signal?.throwIfAborted();
    try {
      findings.push(...await check.run(shared, options));
    } catch (error) {
      findings.push({
        level: "error",
        check: check.name,
        message: `the check failed: ${(error as Error).message ?? String(error)}`,
      });
    }
  }
  return findings;
}
