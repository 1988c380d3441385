/**
 * The rules a call is decided by: the row's `allow`, `ask` and `deny` lists, parsed once, and the session rules
 * answers added, parsed on first use. Internal to approvals.
 *
 * @module
 */
import type { GateCall } from "../tools/approval_gate.ts";
import type { ApprovalState } from "./approval_state.ts";
import type { ApprovalsConfig } from "./approvals_config.ts";
import type { GateDecision } from "./approvals_api.ts";
import { denyMatches, parseRule, type PermissionRule, ruleMatches } from "./permission_rule.ts";

const MAX_CACHED = 4096;

/** Parsed rules. */
export class RuleBook {
  readonly allow: readonly PermissionRule[];
  readonly ask: readonly PermissionRule[];
  readonly deny: readonly PermissionRule[];
  readonly alwaysCanBeRuled: boolean;
  /** True when a config rule is about paths (only then are the workspace directories needed). */
  readonly paths: boolean;
  readonly #session = new Map<string, PermissionRule | null>();

  constructor(config: ApprovalsConfig) {
    this.allow = config.allow.map(parseRule);
    this.ask = config.ask.map(parseRule);
    this.deny = config.deny.map(parseRule);
    this.alwaysCanBeRuled = config.always_can_be_ruled;
    this.paths = [...this.allow, ...this.ask, ...this.deny].some((rule) => rule.kind === "path");
  }

  /** A session rule, parsed once; `null` for one that does not parse (it then matches nothing). */
  session(text: string): PermissionRule | null {
    let rule = this.#session.get(text);
    if (rule === undefined) {
      try {
        rule = parseRule(text);
      } catch {
        rule = null;
      }
      if (this.#session.size >= MAX_CACHED) this.#session.clear();
      this.#session.set(text, rule);
    }
    return rule;
  }
}

/**
 * Decides a call by rules alone: a deny rule (config or session) refuses; an `ask` rule asks; an allow rule
 * (config or session) admits a `policy` tool, and an `always` tool only with `always_can_be_ruled`; nothing
 * matching asks.
 */
export function decideByRules(
  book: RuleBook,
  state: ApprovalState,
  call: GateCall & { readonly dirs: readonly string[] },
): GateDecision {
  const deny = firstMatch(book.deny, call, denyMatches) ??
    firstSessionMatch(book, state.deny, call, denyMatches);
  if (deny !== undefined) return { kind: "deny", reason: `the rule "${deny.text}" denies it` };
  const ask = firstMatch(book.ask, call, ruleMatches);
  if (ask !== undefined) {
    return { kind: "ask", reason: `the rule "${ask.text}" asks before it runs` };
  }
  const allow = firstMatch(book.allow, call, ruleMatches) ??
    firstSessionMatch(book, state.allow, call, ruleMatches);
  if (call.approval === "always") {
    if (allow !== undefined && book.alwaysCanBeRuled) {
      return { kind: "allow", rule: allow.text, bound: allow.kind !== "tool" };
    }
    return {
      kind: "ask",
      reason: `tool "${call.name}" asks before every call (approval always${
        allow === undefined
          ? ""
          : `; the rule "${allow.text}" does not apply without always_can_be_ruled`
      })`,
    };
  }
  if (allow !== undefined) return { kind: "allow", rule: allow.text, bound: allow.kind !== "tool" };
  return { kind: "ask", reason: `no permission rule allows this call of "${call.name}"` };
}

type Matcher = (
  rule: PermissionRule,
  call: GateCall & { readonly dirs: readonly string[] },
) => boolean;

function firstMatch(
  rules: readonly PermissionRule[],
  call: GateCall & { readonly dirs: readonly string[] },
  matches: Matcher,
): PermissionRule | undefined {
  for (const rule of rules) if (matches(rule, call)) return rule;
  return undefined;
}

/** The first session rule (in the order answers added them) that matches; one that does not parse matches nothing. */
function firstSessionMatch(
  book: RuleBook,
  texts: readonly string[],
  call: GateCall & { readonly dirs: readonly string[] },
  matches: Matcher,
): PermissionRule | undefined {
  for (const text of texts) {
    const rule = book.session(text);
    if (rule !== null && matches(rule, call)) return rule;
  }
  return undefined;
}
