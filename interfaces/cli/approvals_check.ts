/**
 * The approvals doctor check: the effective approval stance of the profile (plan §13: approval defaults to policy
 * for mutating tools and always for Bash outside a sandbox; security fails closed). It runs at `serve` too, so a
 * host whose approvals row is disabled says that its `policy` and `always` tools are denied.
 *
 * @module
 */
import { ApprovalsService, ToolRegistry } from "@terret/core";
import type { ApprovalsConfig } from "@terret/core/approvals";
import type { DoctorCheck, DoctorFinding } from "@terret/terret";

/**
 * The `approvals` check (`atServe`): without a tool registry row, `info` (nothing can need approval); with one and
 * no enabled `terret-approvals` row, a `warning` that every `policy` and `always` tool is denied (fail closed) and
 * which row to enable; otherwise `ok` with the stance: the rule counts,
 * whether rules may admit `always` tools, the deadline and what expiry means, and the unattended agents.
 */
export const approvalsCheck: DoctorCheck = {
  name: "approvals",
  description: "the effective approval stance (who is asked, what rules decide, what never waits)",
  atServe: true,
  run(input) {
    const row = input.prepared.find((candidate) => candidate.plugin === ApprovalsService);
    if (!input.prepared.some((candidate) => candidate.plugin === ToolRegistry)) {
      return Promise.resolve([{
        level: "info",
        check: "approvals",
        message: "no tool registry row is enabled, so no call can need an approval",
      }]);
    }
    if (row === undefined) {
      return Promise.resolve([{
        level: "warning",
        check: "approvals",
        message:
          "no approvals row is enabled: every tool whose approval is policy or always (Write, Edit, " +
          "Bash, WebFetch, terminals, MCP tools) is denied (fails closed); enable row approvals to ask instead",
      }]);
    }
    return Promise.resolve([stanceFinding(row.composed.id, row.parsed as ApprovalsConfig)]);
  },
};

/** The `ok` finding describing a row's stance. */
export function stanceFinding(id: string, config: ApprovalsConfig): DoctorFinding {
  const rules =
    `rules: ${config.allow.length} allow, ${config.ask.length} ask, ${config.deny.length} deny`;
  const always = config.always_can_be_ruled
    ? "always tools are decided by rules too (always_can_be_ruled)"
    : "always tools (Bash outside an isolating sandbox) ask on every call";
  const deadline = config.deadline === null
    ? "requests wait until answered"
    : `requests expire after ${config.deadline} (${
      config.on_timeout === "deny" ? "denied" : "policy tools allowed, always tools denied"
    })`;
  const unattended = config.unattended.length === 0
    ? "no agent is unattended"
    : `unattended agents (never asked, denied instead): ${config.unattended.join(", ")}`;
  return {
    level: "ok",
    check: "approvals",
    row: id,
    message:
      `policy tools ask unless a rule decides (${rules}); ${always}; ${deadline}; ${unattended}`,
  };
}
