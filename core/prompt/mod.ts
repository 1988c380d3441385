/**
 * Prompt assembly: the `prompt` service, its sections, and persona amendments.
 *
 * Import from `@terret/core/prompt`.
 *
 * @module
 */
export { PersonaAmended, type PersonaAmendedPayload, PROMPT_EVENTS } from "./events.ts";
export {
  AMENDMENTS_HEADING,
  amendPersona,
  type AmendPersonaOptions,
  NO_PERSONA,
  PERSONA_AMENDMENTS_PRIORITY,
  PERSONA_META_KEY,
  PERSONA_PRIORITY,
  personaFromLog,
  type PersonaState,
} from "./persona.ts";
export {
  type AssembleOptions,
  MIN_SECTION_PRIORITY,
  type Prompt,
  PromptAssembler,
  type PromptConfig,
  promptConfig,
  type PromptEnv,
  type PromptInput,
  PromptKey,
  type PromptSection,
  SECTION_SEPARATOR,
} from "./prompt_assembler.ts";
