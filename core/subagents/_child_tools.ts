/**
 * The tools a child may use: its parent's, narrowed by the parent session's policy and the type's patterns, as
 * exact names. Internal to the subagents service.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { ToolPolicyKey } from "../tools/allow_list.ts";
import { PatternSet } from "../tools/fnmatch.ts";
import { TOOL_NAME_PATTERN } from "../tools/tool.ts";
import { ToolsKey } from "../tools/tool_registry.ts";
import type { SubagentCall } from "./subagents.ts";
import type { SubagentType } from "./subagents_config.ts";

/**
 * The exact tool names the child may use: every tool visible to the parent, and every exact name the type lists
 * (an external agent's tools are not registered here), that the type's patterns name and the policy admits for
 * the parent's session (the floor ∧ the parent session's policy, the parent's own lineage included). Exact names,
 * so the child's policy is never wider than this, whatever registers later. No policy mounted: none.
 */
export async function childTools(
  ctx: Context,
  call: SubagentCall,
  type: SubagentType,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const policy = ctx.maybe(ToolPolicyKey);
  if (policy === undefined) return [];
  const patterns = new PatternSet(type.tools);
  const candidates = new Set([
    ...ctx.get(ToolsKey).list({ ctx: call.ctx }).map((tool) => tool.name),
    ...type.tools.filter((pattern) => TOOL_NAME_PATTERN.test(pattern)),
  ]);
  const names: string[] = [];
  for (const name of candidates) {
    if (!patterns.test(name)) continue;
    const verdict = await policy.check(name, {
      session_id: call.session_id,
      ...(signal === undefined ? {} : { signal }),
    });
    if (verdict.allowed) names.push(name);
  }
  return names.sort();
}
