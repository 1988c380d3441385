/**
 * The environment section: where the agent works, on what, under which sandbox, and whether approvals may park it.
 * Its values are fixed when the session is created (recorded in `session/created` `meta.environment`), so the
 * section renders the same bytes for the whole life of the session whatever the host's config becomes later.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { SandboxKey } from "../seams/sandbox.ts";
import { WorkspaceKey } from "../seams/workspace.ts";
import type { SessionEvent } from "../sessions/envelope.ts";

/** The `session/created` `meta` key holding the environment. */
export const ENVIRONMENT_META_KEY = "environment";

/** The priority of the environment section (reserved: after the instructions and the persona). */
export const ENVIRONMENT_PRIORITY = 90;

/** What the environment section says, as recorded at session creation (wire names are snake_case). */
export interface SessionEnvironment {
  /** The working directory (the first workspace directory; `""` when none is granted). */
  readonly cwd: string;
  /** Every granted workspace directory. */
  readonly workdirs: readonly string[];
  /** The host platform (`linux`, `darwin`, `windows`, …). */
  readonly platform: string;
  /** The session's creation date (`YYYY-MM-DD`, UTC; from `session/created`'s `at`, never stored twice). */
  readonly date: string;
  /** The sandbox provider in force (`docker`, `deno`, `none`, …; `""` when no sandbox row is mounted). */
  readonly sandbox: string;
  /** True when the sandbox isolates programs from the host. */
  readonly isolated: boolean;
  /** True when an `approvals` row is mounted, so a tool call may park until someone decides. */
  readonly approvals: boolean;
}

/**
 * The environment a session created now on `ctx` records (its date is the `session/created` event's own): the
 * workspace, the platform, the sandbox and whether approvals may park. The agent registry stores it in
 * `session/created` `meta.environment` when the `prompt` row renders the environment section.
 *
 * @param ctx the context whose services describe the host (workspace, sandbox, approvals)
 */
export function currentEnvironment(ctx: Context): Omit<SessionEnvironment, "date"> {
  const workdirs = [...(ctx.maybe(WorkspaceKey)?.dirs ?? [])];
  const sandbox = ctx.maybe(SandboxKey);
  return {
    cwd: workdirs[0] ?? "",
    workdirs,
    platform: Deno.build.os,
    sandbox: sandbox?.name ?? "",
    isolated: sandbox?.isolated ?? false,
    approvals: ctx.has("approvals"),
  };
}

/** The environment a `session/created` event recorded, or `undefined` (a session created without one). */
export function recordedEnvironment(created: SessionEvent): SessionEnvironment | undefined {
  const meta = (created.payload as { meta?: Record<string, unknown> } | null)?.meta;
  const value = meta?.[ENVIRONMENT_META_KEY];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const env = value as Record<string, unknown>;
  const text = (key: string): string => typeof env[key] === "string" ? env[key] as string : "";
  const workdirs = Array.isArray(env.workdirs)
    ? env.workdirs.filter((dir): dir is string => typeof dir === "string")
    : [];
  return Object.freeze({
    cwd: text("cwd"),
    workdirs: Object.freeze(workdirs),
    platform: text("platform"),
    date: created.at.slice(0, 10),
    sandbox: text("sandbox"),
    isolated: env.isolated === true,
    approvals: env.approvals === true,
  });
}

/**
 * Renders the environment section: a pure function of the recorded values, so the bytes never change for a
 * session.
 *
 * @example
 * ```ts
 * import { renderEnvironment } from "@terret/core/prompt";
 * console.log(renderEnvironment({
 *   cwd: "/srv/w", workdirs: ["/srv/w"], platform: "linux", date: "2026-01-02",
 *   sandbox: "docker", isolated: true, approvals: false,
 * }).split("\n")[0]); // "# Environment"
 * ```
 */
export function renderEnvironment(env: SessionEnvironment): string {
  const sandbox = env.sandbox === ""
    ? "none mounted: programs cannot run"
    : env.isolated
    ? `${env.sandbox} (programs run isolated from the host)`
    : `${env.sandbox} (programs run directly on the host, not isolated)`;
  return [
    "# Environment",
    `- Working directory: ${env.cwd === "" ? "none granted" : env.cwd}`,
    `- Workspace directories: ${env.workdirs.length === 0 ? "none" : env.workdirs.join(", ")}`,
    `- Platform: ${env.platform}`,
    `- Session created: ${env.date}`,
    `- Sandbox: ${sandbox}`,
    `- Approvals: ${
      env.approvals
        ? "a tool call may wait for a person's decision before it runs"
        : "none; a tool the policy does not allow is refused at once"
    }`,
  ].join("\n");
}
