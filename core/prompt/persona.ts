/**
 * The persona: set at session creation (`session/created` `meta.persona`), amended over the session's life
 * (`persona/amended`), folded from the log and rendered by two sections at reserved priorities.
 *
 * @module
 */
import type { SessionEvent } from "../sessions/envelope.ts";
import type { Sessions, SignalOptions } from "../sessions/sessions.ts";
import { recordedEnvironment, type SessionEnvironment } from "./environment.ts";
import type { PersonaAmendedPayload } from "./events.ts";

/** The `session/created` `meta` key holding the initial persona. */
export const PERSONA_META_KEY = "persona";

/** The priority of the persona section (reserved: it renders first). */
export const PERSONA_PRIORITY = 0;

/** The priority of the persona amendments section (reserved: right after the persona). */
export const PERSONA_AMENDMENTS_PRIORITY = 1;

/** The heading the amendments section starts with. */
export const AMENDMENTS_HEADING =
  "Amendments to the instructions above (they take precedence; the newest is last):";

/** A session's persona as its log defines it. */
export interface PersonaState {
  /** The persona text (empty when none was set). */
  readonly text: string;
  /** Amendments appended since the persona was last set or replaced, oldest first. */
  readonly amendments: readonly string[];
  /** The environment recorded at session creation (`session/created` `meta.environment`), when one was. */
  readonly environment?: SessionEnvironment | undefined;
}

/** The persona of a session with none. */
export const NO_PERSONA: PersonaState = Object.freeze({ text: "", amendments: Object.freeze([]) });

/** The persona a session starts with, from its `session/created` event. */
export function initialPersona(created: SessionEvent): PersonaState {
  const meta = (created.payload as { meta?: Record<string, unknown> } | null)?.meta;
  const text = meta?.[PERSONA_META_KEY];
  const environment = recordedEnvironment(created);
  const persona = typeof text === "string" && text !== "" ? text : "";
  if (persona === "" && environment === undefined) return NO_PERSONA;
  return Object.freeze({
    text: persona,
    amendments: NO_PERSONA.amendments,
    ...(environment === undefined ? {} : { environment }),
  });
}

/** Folds one `persona/amended` event into the state. */
export function amendedPersona(state: PersonaState, event: SessionEvent): PersonaState {
  const { text, replace } = event.payload as PersonaAmendedPayload;
  const environment = state.environment === undefined ? {} : { environment: state.environment };
  if (replace === true) {
    return Object.freeze({ text, amendments: NO_PERSONA.amendments, ...environment });
  }
  return Object.freeze({
    text: state.text,
    amendments: Object.freeze([...state.amendments, text]),
    ...environment,
  });
}

/** Folds a session's events (any types; the relevant ones are used) into its persona. */
export function personaFromLog(events: Iterable<SessionEvent>): PersonaState {
  let state = NO_PERSONA;
  for (const event of events) {
    if (event.type === "session/created") state = initialPersona(event);
    else if (event.type === "persona/amended") state = amendedPersona(state, event);
  }
  return state;
}

/** Options for {@linkcode amendPersona}. */
export interface AmendPersonaOptions extends SignalOptions {
  /** The amendment's text. */
  readonly text: string;
  /** Replace the persona (and earlier amendments) instead of appending. */
  readonly replace?: boolean;
}

/**
 * Appends a `persona/amended` event: the amendment reaches the next step's system prompt.
 *
 * @throws {TerretError} what `sessions.append` throws (`UnknownEventType` when no `prompt` row registered the
 *   type, `SessionNotFound`, …)
 * @throws {TypeError} when `text` is not a string
 *
 * @example
 * ```ts ignore
 * await amendPersona(ctx.get(SessionsKey), "s1", { text: "Answer in French from now on." });
 * ```
 */
export function amendPersona(
  sessions: Sessions,
  sessionId: string,
  options: AmendPersonaOptions,
): Promise<SessionEvent> {
  const text = options?.text;
  if (typeof text !== "string") {
    return Promise.reject(new TypeError("Cannot amend the persona: the text must be a string"));
  }
  const payload: PersonaAmendedPayload = options.replace === true
    ? { text, replace: true }
    : { text };
  return sessions.append(
    sessionId,
    { type: "persona/amended", payload },
    options.signal === undefined ? {} : { signal: options.signal },
  );
}

/** Renders the persona section. */
export function renderPersona(persona: PersonaState): string | undefined {
  return persona.text === "" ? undefined : persona.text;
}

/** Renders the amendments section. */
export function renderAmendments(persona: PersonaState): string | undefined {
  if (persona.amendments.length === 0) return undefined;
  return [AMENDMENTS_HEADING, ...persona.amendments].join("\n\n");
}
