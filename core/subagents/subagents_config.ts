/**
 * The `subagents` row's config: the subagent types the `Task` tool offers, and the limits every child runs under.
 *
 * @module
 */
import { z } from "zod";
import { ModelRoleSchema } from "../llm/schemas.ts";
import type { ModelRole } from "../llm/vocabulary.ts";

/** One subagent type: what the model picks with `Task`'s `subagent_type`. */
export interface SubagentType {
  /** The name the model passes as `subagent_type` (`general-purpose`, `reviewer`). */
  readonly name: string;
  /** When to use it, listed in the `Task` tool's description. */
  readonly description: string;
  /** The child's persona (its system prompt, recorded as `session/created` `meta.persona`). */
  readonly system: string;
  /**
   * Tool patterns (case-sensitive fnmatch globs) the child may use, further narrowed by what its parent may use
   * (floor ∧ the parent session's policy): never wider than the parent.
   */
  readonly tools: readonly string[];
  /** The model role the child's requests go to. */
  readonly role: ModelRole;
  /** A model string sent with each request (overrides the role adapter's model), when set. */
  readonly model?: string | undefined;
  /** The most steps the child's one turn may take. */
  readonly max_steps: number;
  /**
   * `unattended` (default): nobody answers for the child, so its approval gate denies what it would ask.
   * `inherit`: its requests park in its own log, where the parent's clients (granted `<parent>*`) answer them.
   */
  readonly approvals: "unattended" | "inherit";
  /** The provider that runs it: `agent` (a fresh child agent, the default) or `acp` (an external ACP agent). */
  readonly provider: string;
  /** For `provider: acp`: the agent's command line (argv), spawned through the sandbox seam. */
  readonly command?: readonly string[] | undefined;
  /** For `provider: acp`: the working directory the external agent's session gets (default: the first workspace). */
  readonly cwd?: string | undefined;
}

/** The `subagents` row's config. */
export interface SubagentsConfig {
  /** The subagent types; `Task` lists them in its description. */
  readonly types: readonly SubagentType[];
  /** The deepest a child may be (a top-level agent is depth 0; its children depth 1). */
  readonly max_depth: number;
  /** The most children one parent session runs at once. */
  readonly max_concurrent: number;
  /** Seconds a child may run before it is cancelled (its result then says so). */
  readonly timeout: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The config schema of one subagent type. */
export const subagentTypeSchema: z.ZodType<SubagentType> = z.strictObject({
  name: z.string().regex(NAME).describe("The name the model passes as Task's subagent_type"),
  description: z.string().min(1).describe(
    "When to use this type; listed in the Task tool's description so the model can choose",
  ),
  system: z.string().default("").describe("The child's persona (its system prompt)"),
  tools: z.array(z.string().min(1)).default(["*"]).describe(
    "Tool patterns the child may use, narrowed further by what the parent may use (never wider)",
  ),
  role: ModelRoleSchema.default("subagent").describe("The model role the child's requests go to"),
  model: z.string().min(1).optional().describe(
    "A model string sent with each of the child's requests",
  ),
  max_steps: z.number().int().min(1).max(10_000).default(25).describe(
    "The most steps the child's turn may take",
  ),
  approvals: z.enum(["unattended", "inherit"]).default("unattended").describe(
    "unattended: the child's approval gate denies what it would ask; inherit: its requests park in its log for " +
      "the parent's clients (granted <parent>*) to answer",
  ),
  provider: z.string().regex(/^[a-z][a-z0-9_-]*$/).default("agent").describe(
    "agent: a fresh child agent in this host; acp: an external ACP agent (command) driven as an ACP client",
  ),
  command: z.array(z.string().min(1)).min(1).optional().describe(
    "provider acp: the agent's argv, spawned through the sandbox seam",
  ),
  cwd: z.string().min(1).optional().describe(
    "provider acp: the working directory of the external agent's session (default: the first workspace dir)",
  ),
}).refine((type) => type.provider !== "acp" || type.command !== undefined, {
  message: "a type with provider acp needs a command (the external agent's argv)",
  path: ["command"],
}) as z.ZodType<SubagentType>;

/** The default type when the row lists none: Claude Code's `general-purpose`. */
export const GENERAL_PURPOSE: SubagentType = Object.freeze({
  name: "general-purpose",
  description:
    "A general-purpose agent for researching questions, searching code and carrying out multi-step tasks",
  system: "",
  tools: Object.freeze(["*"]),
  role: "subagent" as const,
  max_steps: 25,
  approvals: "unattended" as const,
  provider: "agent",
});

/** The `subagents` row's config schema. */
export const subagentsConfig: z.ZodType<SubagentsConfig> = z.strictObject({
  types: z.array(subagentTypeSchema).default([GENERAL_PURPOSE]).refine(
    (types) => new Set(types.map((type) => type.name)).size === types.length,
    "type names must be unique",
  ).describe(
    "The subagent types Task offers (name, description, system, tools, role, model, max_steps, approvals, " +
      "provider, command); default: one general-purpose type",
  ),
  max_depth: z.number().int().min(1).max(16).default(2).describe(
    "The deepest a child may run (a top-level agent is depth 0); a Task call past it is refused",
  ),
  max_concurrent: z.number().int().min(1).max(256).default(4).describe(
    "The most children one parent session runs at once; a Task call past it is refused",
  ),
  timeout: z.number().min(1).max(86_400).default(600).describe(
    "Seconds a child may run before it is cancelled (wall clock); its Task result then says so",
  ),
}) as z.ZodType<SubagentsConfig>;
