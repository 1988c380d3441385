/**
 * The `approvals` row's config: permission rules, the deadline and what expiry means, unattended agents.
 *
 * @module
 */
import { z } from "zod";
import { parseRule } from "./permission_rule.ts";

/** The `approvals` row's config. */
export interface ApprovalsConfig {
  /** Rules whose calls run without asking (for `always` tools only with `always_can_be_ruled`). */
  readonly allow: readonly string[];
  /** Rules whose calls are always asked about, even when an allow rule matches. */
  readonly ask: readonly string[];
  /** Rules whose calls are refused without asking. */
  readonly deny: readonly string[];
  /** Let allow rules admit `always` tools too (default false: an `always` tool is always asked about). */
  readonly always_can_be_ruled: boolean;
  /** How long a request waits before it expires (`90s`, `10m`, `2h`, `1d`), or null to wait for ever. */
  readonly deadline: string | null;
  /** What expiry means: `deny`, or `allow_policy` (allow a `policy` tool, deny an `always` one). */
  readonly on_timeout: "deny" | "allow_policy";
  /** Agent-id globs of agents nobody answers for: their asks are denied at once (`by.kind = "unattended"`). */
  readonly unattended: readonly string[];
  /** The most sessions whose approvals are cached at once. */
  readonly cache_sessions: number;
}

const DURATION = /^([1-9][0-9]{0,8})(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5 };

/** A duration (`90s`, `10m`, `2h`, `1d`, `500ms`) in milliseconds, or undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]!]!;
}

const rules = (what: string): z.ZodType<string[]> =>
  z.array(z.string()).default([]).superRefine((list, issues) => {
    for (const [i, text] of list.entries()) {
      try {
        parseRule(text);
      } catch (error) {
        issues.addIssue({ code: "custom", path: [i], message: (error as Error).message });
      }
    }
  }).describe(what) as unknown as z.ZodType<string[]>;

/** The `approvals` row's config schema. */
export const approvalsConfig: z.ZodType<ApprovalsConfig> = z.strictObject({
  allow: rules(
    "Permission rules (Claude Code's shape: Bash(git status), Bash(npm test:*), Read(./src/**), " +
      "WebFetch(domain:example.com), mcp__github__*) whose calls of policy tools run without asking",
  ),
  ask: rules(
    "Permission rules whose calls are always asked about, even when an allow rule matches",
  ),
  deny: rules(
    "Permission rules whose calls are refused without asking; deny beats ask beats allow, and a compound " +
      "Bash command is denied when any of its commands matches",
  ),
  always_can_be_ruled: z.boolean().default(false).describe(
    "Let allow rules (config and session) admit tools whose approval is always (Bash outside an isolating " +
      "sandbox); by default those are asked about on every call",
  ),
  deadline: z.string().refine((text) => durationMs(text) !== undefined, {
    message: 'expected a duration such as "90s", "10m", "2h" or "1d"',
  }).nullable().default(null).describe(
    "How long a request waits for an answer before it expires (90s, 10m, 2h, 1d); null waits for ever. " +
      "Expiry is durable and applied on boot to requests whose deadline passed while the host was down",
  ),
  on_timeout: z.enum(["deny", "allow_policy"]).default("deny").describe(
    "What an expired request gets: deny, or allow_policy (allows a policy tool, still denies an always one)",
  ),
  unattended: z.array(z.string().min(1)).default([]).describe(
    "Agent-id globs of agents nobody answers for (orchestrated agents): the gate never parks their calls; " +
      "rules decide, and what would be asked is denied with by.kind unattended. A session created with meta " +
      "{unattended: true} (a subagent) is unattended too",
  ),
  cache_sessions: z.number().int().min(1).default(10_000).describe(
    "Sessions whose approvals (requests, verdicts, session rules) are cached at once; older entries are " +
      "re-read from the log",
  ),
}) as z.ZodType<ApprovalsConfig>;
