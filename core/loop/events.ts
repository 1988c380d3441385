/**
 * The loop's live extension points: `agent/pre_step` and `agent/request` (waterfalls) and `agent/turn_stopping`
 * (serial). Every one is dispatched on the agent's forked context, so a listener registered on that fork governs
 * that agent alone and one registered on the root governs every agent.
 *
 * @module
 */
import { defineEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";
import type { Content } from "../sessions/events.ts";
import { LlmRequestSchema, ModelRoleSchema } from "../llm/schemas.ts";
import type { LlmRequest, ModelRole } from "../llm/vocabulary.ts";

const OWNER = "@terret/core";

/**
 * One item of a step's input: a `message` is logged as `user/message`, a `steer` as `context/injected` (both
 * model-visible, projected as user messages).
 */
export interface InputItem {
  readonly kind: "message" | "steer";
  readonly content: Content;
  /** The seq of the `input/queued` event this item claims, when it was queued durably (logged with the claim). */
  readonly queued_seq?: number;
}

/** How a turn ended (the `turn/end` status). */
export type TurnStatus = "completed" | "cancelled" | "failed" | "rejected";

/** Payload of {@linkcode AgentPreStep}. */
export interface PreStepPayload {
  readonly agent_id: string;
  readonly session_id: string;
  /** The step about to start, from 1 within the turn. */
  readonly step: number;
  /** What the step claimed from the inbox (pending steers and at most one message, in arrival order). */
  readonly messages: readonly InputItem[];
}

/** What the `agent/pre_step` chain returns: the input to enter (and log), or a rejection ending the turn. */
export type PreStepResult =
  | { readonly enter: readonly InputItem[] }
  | { readonly reject: string };

const content = z.union([
  z.string(),
  z.array(z.looseObject({ type: z.enum(["text", "image"]) })),
]);
const inputItem = z.object({
  kind: z.enum(["message", "steer"]),
  content,
  queued_seq: z.number().int().positive().optional(),
});

/**
 * `agent/pre_step` (waterfall), dispatched before every step with what the step claimed.
 *
 * Contract: a listener calls `next()` or `next({...payload, messages})` to pass the (possibly rewritten) input on
 * (redaction, added context: whatever it returns is what gets logged and so what the model sees), or returns
 * `{reject: reason}` without `next` to end the turn with `turn/end` status `rejected` before the step starts. The
 * innermost step enters the payload's messages unchanged. A throwing listener fails the turn. An empty entry on a
 * turn's first step closes the turn as `rejected` (nothing to answer).
 */
export const AgentPreStep: EventDefinition<"waterfall", PreStepPayload, Promise<PreStepResult>> =
  defineEvent("agent/pre_step", {
    mode: "waterfall",
    owner: OWNER,
    description:
      "Before each step: rewrite the claimed input (what returns is what is logged) or reject the turn.",
    payload: z.object({
      agent_id: z.string(),
      session_id: z.string(),
      step: z.number().int().positive(),
      messages: z.array(inputItem),
    }) as unknown as z.ZodType<PreStepPayload>,
    result: z.custom<Promise<PreStepResult>>(),
  });

/** Payload of {@linkcode AgentRequest} (and what its chain returns: the final request and role). */
export interface AgentRequestPayload {
  readonly agent_id: string;
  readonly session_id: string;
  /** The step, from 1 within the turn. */
  readonly step: number;
  /** The model role the request goes to (default `main`). */
  readonly role: ModelRole;
  /** The request: the assembled system prompt, the history derived from the log, the offered tools. */
  readonly request: LlmRequest;
}

/**
 * `agent/request` (waterfall), dispatched after the request is built and before it is checked and sent.
 *
 * Contract: a listener may rewrite the request or the role (`next({...payload, request})`): model routing,
 * parameters, tool filtering. The loop then asserts the log invariant on the **final** request's messages
 * (`sessions.assertInvariant`), so a rewrite of `messages` that the log cannot reconstruct fails the turn in
 * development and test mode (and is reported in production): anything model-visible must be logged first. A
 * listener that returns without `next` supplies the final payload itself. A throwing listener fails the turn.
 */
export const AgentRequest: EventDefinition<
  "waterfall",
  AgentRequestPayload,
  Promise<AgentRequestPayload>
> = defineEvent("agent/request", {
  mode: "waterfall",
  owner: OWNER,
  description:
    "Before each model request: rewrite the request or role; the invariant is asserted on what returns.",
  payload: z.object({
    agent_id: z.string(),
    session_id: z.string(),
    step: z.number().int().positive(),
    role: ModelRoleSchema,
    request: LlmRequestSchema,
  }) as unknown as z.ZodType<AgentRequestPayload>,
  result: z.custom<Promise<AgentRequestPayload>>(),
});

/** Payload of {@linkcode AgentTurnStopping}. */
export interface TurnStoppingPayload {
  readonly agent_id: string;
  readonly session_id: string;
  /** The status the turn will end with. */
  readonly status: TurnStatus;
  /** Steps taken in the turn so far. */
  readonly steps: number;
}

/** What an `agent/turn_stopping` listener may return: context to inject and one more step to run. */
export interface TurnStoppingResult {
  /** Logged as `context/injected` at the next step boundary; the turn then goes on. */
  readonly continue: Content;
}

/**
 * `agent/turn_stopping` (serial), dispatched once a turn has nothing more owed, before `turn/end`.
 *
 * Contract: listeners run in order; the first returning `{continue: content}` makes the loop log that content as
 * `context/injected` and run another step (only when the status is `completed`, and within `max_steps`, so a
 * listener cannot keep a failed or cancelled turn alive or loop forever); returning nothing lets the turn end. A
 * throwing listener fails the turn.
 */
export const AgentTurnStopping: EventDefinition<
  "serial",
  TurnStoppingPayload,
  TurnStoppingResult
> = defineEvent("agent/turn_stopping", {
  mode: "serial",
  owner: OWNER,
  description:
    "A turn is about to end: return {continue: content} to inject context and run one more step.",
  payload: z.object({
    agent_id: z.string(),
    session_id: z.string(),
    status: z.enum(["completed", "cancelled", "failed", "rejected"]),
    steps: z.number().int().min(0),
  }) as z.ZodType<TurnStoppingPayload>,
  result: z.object({ continue: content }) as unknown as z.ZodType<TurnStoppingResult>,
});

/** Every live event the loop dispatches, for the events catalog. */
export const LOOP_EVENTS: readonly EventDefinition[] = Object.freeze([
  AgentPreStep,
  AgentRequest,
  AgentTurnStopping,
] as EventDefinition[]);
