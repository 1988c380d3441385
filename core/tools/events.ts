/**
 * The tool pipeline's extension points: three waterfalls dispatched on the calling agent's context.
 *
 * @module
 */
import { type Context, defineEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";
import type { ToolContent, ToolInfo, ToolOutcome } from "./tool.ts";

const OWNER = "@terret/core";

/** A call entering the pipeline (the `tools/pre_execute` payload). */
export interface ToolInvocation {
  /** The call id; the registry keeps the original whatever a listener passes on. */
  readonly id: string;
  /** The tool to run; a listener may rewrite it (the gate then checks the new name). */
  readonly name: string;
  /** The arguments as the model sent them (or as a listener rewrote them); not yet validated. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The session the call belongs to (informational: rewriting it changes nothing). */
  readonly session_id: string;
  /** The calling agent (informational). */
  readonly agent_id: string;
}

/**
 * What the `tools/pre_execute` chain returns: the call to admit (then gated by the allow list, validated and run),
 * or a result that ends the call here (a veto).
 */
export type PreExecuteResult =
  | { readonly admit: ToolInvocation }
  | { readonly result: ToolOutcome };

/** An admitted, validated call about to run (the `tools/execute` payload). */
export interface ToolExecution extends ToolInvocation {
  /** The tool being run. */
  readonly tool: ToolInfo;
  /** Aborted when the call is cancelled. */
  readonly signal: AbortSignal;
  /** The calling agent's context. */
  readonly ctx: Context;
}

/** A finished call on its way out (the `tools/post_execute` payload). */
export interface ToolCompletion extends ToolInvocation {
  readonly content: ToolContent;
  readonly is_error: boolean;
}

const invocationFields = {
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  session_id: z.string(),
  agent_id: z.string(),
};
const content = z.union([z.string(), z.array(z.looseObject({ type: z.enum(["text", "image"]) }))]);
const outcome = z.object({ content, is_error: z.boolean() });

/**
 * `tools/pre_execute` (waterfall): validation, veto and argument rewrite before a call runs.
 *
 * Contract: a listener returns `next()` (or `next(rewritten)`) to pass the call on, or `{result}` to end it there
 * (a veto, `is_error: true`). It may also return `{admit: call}` without `next`, but that admits nothing by
 * itself: the registry then applies the allow list to the exact admitted call (name included) and validates its
 * arguments, so no listener can admit a call past the floor or past the schema. A throwing listener makes the
 * call an error result.
 */
export const ToolsPreExecute: EventDefinition<
  "waterfall",
  ToolInvocation,
  Promise<PreExecuteResult>
> = defineEvent("tools/pre_execute", {
  mode: "waterfall",
  owner: OWNER,
  description:
    "Before a call runs, on the calling agent's context: validate, veto ({result}) or rewrite (next(call)); " +
    "the allow list then gates the exact admitted call, so a listener can veto but never admit past it.",
  payload: z.looseObject(invocationFields) as z.ZodType<ToolInvocation>,
  result: z.custom<Promise<PreExecuteResult>>(),
});

/**
 * `tools/execute` (waterfall around the handler): a provider may replace execution (a remote sandbox taking over
 * `Bash`), an approvals gate may park or refuse it.
 *
 * Contract: a listener returns `next()` to run the handler (`next(execution)` to run it with rewritten `args`,
 * validated again) or a {@linkcode ToolOutcome} of its own. The tool, session, agent and context of the run are
 * the registry's: rewriting them changes nothing. It should honour `signal`.
 */
export const ToolsExecute: EventDefinition<"waterfall", ToolExecution, Promise<ToolOutcome>> =
  defineEvent("tools/execute", {
    mode: "waterfall",
    owner: OWNER,
    description:
      "Around the handler of an admitted, validated call, on the calling agent's context: a provider may " +
      "replace execution or an approvals gate refuse it, by returning {content, is_error} instead of next().",
    payload: z.looseObject({
      ...invocationFields,
      tool: z.custom<ToolInfo>((value) => typeof value === "object" && value !== null),
      signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal),
      ctx: z.custom<Context>((value) => typeof value === "object" && value !== null),
    }) as z.ZodType<ToolExecution>,
    result: z.custom<Promise<ToolOutcome>>(),
  });

/**
 * `tools/post_execute` (waterfall): truncation, redaction and telemetry over every result of a call that entered
 * the pipeline (denials and errors included).
 *
 * Contract: a listener returns `next()` (or `next(completion)` with rewritten `content`/`is_error`) or a
 * {@linkcode ToolOutcome}. The output cap is applied after the chain, so no listener can lift it.
 */
export const ToolsPostExecute: EventDefinition<
  "waterfall",
  ToolCompletion,
  Promise<ToolOutcome>
> = defineEvent("tools/post_execute", {
  mode: "waterfall",
  owner: OWNER,
  description:
    "After a call, on the calling agent's context: truncate, redact or observe its {content, is_error}; the " +
    "output cap (tools.max_output_bytes) applies after the chain.",
  payload: z.looseObject({ ...invocationFields, ...outcome.shape }) as z.ZodType<ToolCompletion>,
  result: z.custom<Promise<ToolOutcome>>(),
});

/** The tool pipeline's events, in pipeline order. */
export const TOOL_EVENTS: readonly EventDefinition[] = Object.freeze([
  ToolsPreExecute,
  ToolsExecute,
  ToolsPostExecute,
] as EventDefinition[]);
