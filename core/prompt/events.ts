/**
 * The prompt's events: the durable persona amendment and the assembler's collection event.
 *
 * @module
 */
import { defineEvent, type EmitEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";

const OWNER = "@terret/core";

/** Payload of {@linkcode PersonaAmended}. */
export interface PersonaAmendedPayload {
  /** The amendment's text. */
  readonly text: string;
  /** True to replace the persona (and every earlier amendment) with `text`; otherwise `text` is appended. */
  readonly replace?: boolean | undefined;
}

/**
 * `persona/amended` (durable): an amendment to the session's persona. The persona is model-visible, so it lives in
 * the log: `session/created`'s `meta.persona` sets it, each `persona/amended` amends it, and the prompt's persona
 * sections render the fold of both. It projects nothing into the message history (it reaches the model through
 * the system prompt). Registered with the sessions service by the `prompt` row.
 */
export const PersonaAmended: EmitEvent<PersonaAmendedPayload> = defineEvent("persona/amended", {
  mode: "emit",
  durable: true,
  owner: OWNER,
  description:
    "The session's persona was amended (appended to, or replaced when `replace` is true); rendered into the " +
    "system prompt by the persona sections, never projected into the message history.",
  payload: z.looseObject({ text: z.string(), replace: z.boolean().optional() }) as z.ZodType<
    PersonaAmendedPayload
  >,
});

/** What the prompt's collection event carries: listeners add the sections they registered with `prompt`. */
export interface SectionCollector {
  /** The assembler instance collecting. */
  readonly assembler: object;
  /** Adds one registration. */
  add(entry: unknown): void;
}

/**
 * `prompt/collect` (emit): the assembler's own mechanism for finding the sections visible from a context (each
 * registration listens on its owner's context). Register sections through `prompt.register`; never listen to it.
 */
export const PromptCollect: EmitEvent<SectionCollector> = defineEvent("prompt/collect", {
  mode: "emit",
  owner: OWNER,
  description:
    "Internal to the prompt assembler: collects the sections visible from the dispatching context (each " +
    "registration listens on its owner's context); register with prompt.register, never listen to it.",
  payload: z.custom<SectionCollector>((value) => typeof value === "object" && value !== null),
});

/** The prompt's events. */
export const PROMPT_EVENTS: readonly EventDefinition[] = Object.freeze([
  PersonaAmended,
  PromptCollect,
] as EventDefinition[]);
