/**
 * The prompt's events: the durable persona amendment.
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

/** The prompt's events. */
export const PROMPT_EVENTS: readonly EventDefinition[] = Object.freeze([
  PersonaAmended,
] as EventDefinition[]);
