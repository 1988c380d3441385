/**
 * Durable approvals: the `approvals` row (the gate for `policy` and `always` tools), permission rules in Claude
 * Code's shape, the Bash command reader, the per-session approval projection and the rule `remember` adds.
 *
 * Import from `@terret/core/approvals`.
 *
 * @module
 */
export { type ApprovalClock, ApprovalClockKey, SYSTEM_CLOCK } from "./approval_clock.ts";
export { ApprovalsKey, ApprovalsService } from "./approvals.ts";
export type { AnswerInput, Approvals, ApprovalStance, GateDecision } from "./approvals_api.ts";
export {
  APPROVAL_STATE_TYPES,
  type ApprovalRequest,
  type ApprovalState,
  type ApprovalVerdict,
  foldApprovalState,
  initialApprovalState,
  replayApprovalState,
} from "./approval_state.ts";
export { type ApprovalsConfig, approvalsConfig, durationMs } from "./approvals_config.ts";
export { type BashCommand, bashPieces, readBashCommand } from "./bash_command.ts";
export {
  denyMatches,
  parseRule,
  type PermissionRule,
  type RuleCall,
  ruleMatches,
} from "./permission_rule.ts";
export { rememberRule } from "./remember_rule.ts";
