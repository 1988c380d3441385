/**
 * Prompt assembly (`prompt`): sections registered as effects of their owner, collected for the calling agent's
 * context, ordered by priority then name, and rendered into a byte-stable system prompt.
 *
 * @module
 */
import {
  type Context,
  defineService,
  type Disposer,
  type HostPermissions,
  ScopedCollection,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import type { LlmCapabilities } from "../llm/vocabulary.ts";
import { SessionProjection } from "../sessions/session_projection.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import {
  currentEnvironment,
  ENVIRONMENT_META_KEY,
  ENVIRONMENT_PRIORITY,
  renderEnvironment,
} from "./environment.ts";
import { PersonaAmended } from "./events.ts";
import {
  type AgentInstructions,
  instructionFiles,
  INSTRUCTIONS_PRIORITY,
  instructionsFor,
  instructionsShape,
  resolveInstructions,
} from "./instructions.ts";
import {
  amendedPersona,
  initialPersona,
  PERSONA_AMENDMENTS_PRIORITY,
  PERSONA_PRIORITY,
  type PersonaState,
  renderAmendments,
  renderPersona,
} from "./persona.ts";

/** What a step's prompt is assembled from (the caller's part of the {@linkcode PromptEnv}). */
export interface PromptInput {
  /** The session the step belongs to (its persona is read from its log). */
  readonly session_id: string;
  /** The agent taking the step. */
  readonly agent_id: string;
  /** The model the request goes to, when known. */
  readonly model?: string;
  /** The model's capabilities, when known. */
  readonly capabilities?: LlmCapabilities;
  /** The names of the tools offered this step (their schemas travel beside the prompt, not in it). */
  readonly tools?: readonly string[];
  /** The directories the agent works in. */
  readonly workdirs?: readonly string[];
  /** Free-form values sections may use (deployment name, user locale, …). */
  readonly vars?: Readonly<Record<string, string>>;
}

/** What sections render against: the input with defaults filled in and the session's persona from its log. */
export interface PromptEnv extends PromptInput {
  readonly tools: readonly string[];
  readonly workdirs: readonly string[];
  readonly vars: Readonly<Record<string, string>>;
  /** The session's persona, folded from its log. */
  readonly persona: PersonaState;
}

/**
 * A prompt section.
 *
 * Contract: `render` is a pure function of the env: the same env must give the same text (no clock, randomness,
 * counters or reads), which is what lets provider prompt caching hit; outside production mode the assembler
 * renders each section twice and throws `PromptUnstable` when the two differ. It returns the text, or `undefined`
 * (or `""`) to contribute nothing this step. A throw fails the assembly (`PromptSectionFailed`).
 */
export interface PromptSection {
  /** Unique among the sections visible from the owner: lowercase letters, digits, `.`, `_`, `-`, `:`. */
  readonly name: string;
  /** Lower renders first; ties break by name. Integers from {@linkcode MIN_SECTION_PRIORITY}. */
  readonly priority: number;
  /** Renders the section's text. */
  render(env: PromptEnv): string | undefined;
}

/** The lowest priority a registered section may take; lower ones are reserved (the persona sections). */
export const MIN_SECTION_PRIORITY = 100;

/** The separator between rendered sections. */
export const SECTION_SEPARATOR = "\n\n";

const SECTION_NAME = /^[a-z0-9][a-z0-9._:-]{0,63}$/;

/** Options for {@linkcode Prompt.assemble}. */
export interface AssembleOptions {
  readonly signal?: AbortSignal;
}

/**
 * The prompt service (key `prompt`).
 *
 * Contract: `register` is an effect of `owner` (the section is visible from `owner`'s subtree and dies with it); a
 * name already visible from `owner` is refused (`SectionExists`), a bad section is a `TypeError`. `assemble`
 * renders the sections visible from `ctx` in (priority, name) order, each normalized (CRLF to LF, trailing
 * whitespace trimmed), skipping empty ones, joined by {@linkcode SECTION_SEPARATOR}: the same env and sections
 * give the same bytes. It rejects with `SessionNotFound` for a session the log does not hold, `PromptSectionFailed`
 * when a section throws or returns a non-string, `PromptUnstable` (outside production) for a non-deterministic
 * section.
 */
export interface Prompt {
  /** Registers a section for as long as `owner` lives. */
  register(owner: Context, section: PromptSection): Disposer;
  /** The sections visible from `ctx`, in render order. */
  sections(ctx?: Context): readonly { readonly name: string; readonly priority: number }[];
  /** Renders the system prompt for one step. */
  assemble(ctx: Context, input: PromptInput, options?: AssembleOptions): Promise<string>;
  /** The session's persona, folded from its log (`undefined` for an unknown session). */
  persona(sessionId: string, options?: AssembleOptions): Promise<PersonaState | undefined>;
  /**
   * What a session created now on `ctx` records in its `session/created` meta for the prompt: `{environment}`
   * when the row renders the environment section, else nothing. The agent registry merges it into a new session's
   * meta, so the section's values are fixed for the session's life.
   */
  creationMeta(ctx: Context): Readonly<Record<string, unknown>>;
}

/** The prompt service key. */
export const PromptKey: ServiceKey<Prompt> = defineService<Prompt>(
  "prompt",
  "Prompt assembly: sections registered as effects, rendered byte-stably per step with the session's persona",
);

/** The `prompt` row's config. */
export interface PromptConfig {
  /** The most sessions whose persona is cached at once. */
  readonly cache_sessions: number;
  /** The system prompt's text for every agent (rendered first). */
  readonly system?: string | undefined;
  /** An absolute path to a file holding it instead. */
  readonly system_file?: string | undefined;
  /** Per-agent-id-glob overrides, first match wins. */
  readonly agents: readonly AgentInstructions[];
  /** Render the environment section (recorded at session creation). */
  readonly environment: boolean;
}

/** The `prompt` row's config schema. */
export const promptConfig: z.ZodType<PromptConfig> = z.strictObject({
  cache_sessions: z.number().int().min(1).default(10_000).describe(
    "Sessions whose persona (session/created meta.persona folded with persona/amended) is cached at once",
  ),
  ...instructionsShape,
  environment: z.boolean().default(false).describe(
    "Render the environment section (working directory, workspace, platform, creation date, sandbox, approvals) " +
      "from the values recorded in session/created meta.environment; they never change for a session",
  ),
}) as z.ZodType<PromptConfig>;

/**
 * The prompt assembler (plugin `terret-prompt`, row `prompt`): registers `persona/amended` with the log and the
 * sections at reserved priorities: the deployment's instructions (`system`, `system_file`, per-agent `agents`
 * overrides; -1), the persona (0), its amendments (1) and the environment recorded at session creation (90).
 */
export class PromptAssembler extends Service<PromptConfig> implements Prompt {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-prompt";
  /** One line for the config catalog. */
  static readonly description =
    "Prompt assembly (row prompt): sections as effects, byte-stable rendering, the persona from the log.";
  /** The service key. */
  static readonly key: ServiceKey<Prompt> = PromptKey;
  /** The persona lives in the log. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey];
  /** The config schema. */
  static readonly config: z.ZodType<PromptConfig> = promptConfig;

  /** Reads the instruction files it is given; the persona comes from the log through the sessions service. */
  static permissions(config: PromptConfig): HostPermissions {
    const files = instructionFiles(config);
    return files.length === 0 ? {} : { read: files };
  }

  readonly #sections = new ScopedCollection<PromptSection, readonly PromptSection[]>((sections) =>
    this.#order(sections)
  );
  /** The last render order derived: a context that sees the same sections shares it. */
  #lastOrder:
    | { readonly sections: readonly PromptSection[]; readonly order: readonly PromptSection[] }
    | undefined;
  /**
   * The last prompt assembled for each persona (a session's persona state is a new object whenever it changes),
   * with what it was rendered from: sections are pure functions of the env, so the same env and sections give the
   * same text without rendering again.
   */
  readonly #rendered = new WeakMap<PersonaState, Rendered>();
  #personas: SessionProjection<PersonaState> | undefined;

  override async start(): Promise<void> {
    const instructions = await resolveInstructions(this.config);
    const sessions = this.ctx.get(SessionsKey);
    sessions.registerEventType(this.ctx, PersonaAmended, { projection: null });
    this.#personas = new SessionProjection<PersonaState>(this.ctx, sessions, {
      types: ["persona/amended"],
      initial: initialPersona,
      fold: amendedPersona,
      maxSessions: this.config.cache_sessions,
      label: "prompt: personas",
    });
    this.#add(this.ctx, {
      name: "persona",
      priority: PERSONA_PRIORITY,
      render: (env) => renderPersona(env.persona),
    });
    this.#add(this.ctx, {
      name: "persona.amendments",
      priority: PERSONA_AMENDMENTS_PRIORITY,
      render: (env) => renderAmendments(env.persona),
    });
    if (instructions.default !== "" || instructions.agents.length > 0) {
      this.#add(this.ctx, {
        name: "instructions",
        priority: INSTRUCTIONS_PRIORITY,
        render: (env) => instructionsFor(instructions, env.agent_id),
      });
    }
    if (this.config.environment) {
      this.#add(this.ctx, {
        name: "session.environment",
        priority: ENVIRONMENT_PRIORITY,
        render: (env) =>
          env.persona.environment === undefined
            ? undefined
            : renderEnvironment(env.persona.environment),
      });
    }
  }

  register(owner: Context, section: PromptSection): Disposer {
    if (owner === null || typeof owner !== "object" || typeof owner.on !== "function") {
      throw new TypeError("Cannot register a prompt section: the owner must be a Context");
    }
    const name = section?.name;
    if (typeof name !== "string" || !SECTION_NAME.test(name)) {
      throw new TypeError(
        `Cannot register prompt section ${
          JSON.stringify(String(name))
        }: its name must match ${SECTION_NAME}`,
      );
    }
    if (!Number.isSafeInteger(section.priority) || section.priority < MIN_SECTION_PRIORITY) {
      throw new RangeError(
        `Cannot register prompt section "${name}": its priority must be an integer of at least ${MIN_SECTION_PRIORITY} (lower ones are reserved), got ${section.priority}`,
      );
    }
    if (typeof section.render !== "function") {
      throw new TypeError(`Cannot register prompt section "${name}": render must be a function`);
    }
    return this.#add(owner, section);
  }

  sections(
    ctx: Context = this.ctx,
  ): readonly { readonly name: string; readonly priority: number }[] {
    return this.#collect(ctx).map(({ name, priority }) => ({ name, priority }));
  }

  creationMeta(ctx: Context): Readonly<Record<string, unknown>> {
    return this.config.environment ? { [ENVIRONMENT_META_KEY]: currentEnvironment(ctx) } : {};
  }

  /** How many sessions' personas are cached (for tests and diagnostics). */
  get cachedSessions(): number {
    return this.#personas?.size ?? 0;
  }

  async persona(
    sessionId: string,
    options: AssembleOptions = {},
  ): Promise<PersonaState | undefined> {
    return await this.#personas!.get(sessionId, options);
  }

  async assemble(ctx: Context, input: PromptInput, options: AssembleOptions = {}): Promise<string> {
    if (typeof input?.session_id !== "string" || typeof input.agent_id !== "string") {
      throw new TypeError("Cannot assemble a prompt: input needs a session_id and an agent_id");
    }
    const persona = await this.persona(input.session_id, options);
    if (persona === undefined) {
      throw new TerretError(
        "SessionNotFound",
        `Cannot assemble the prompt for session "${input.session_id}": the log does not hold it`,
        { details: { session_id: input.session_id } },
      );
    }
    const sections = this.#collect(ctx);
    const last = this.#rendered.get(persona);
    if (last !== undefined && last.sections === sections && sameInput(last.input, input)) {
      return last.text;
    }
    const env = envOf(input, persona);
    const check = ctx.mode !== "production";
    const parts: string[] = [];
    for (const section of sections) {
      const text = renderSection(section, env);
      if (check && renderSection(section, env) !== text) {
        throw new TerretError(
          "PromptUnstable",
          `Cannot assemble the prompt: section "${section.name}" rendered different text twice for the same ` +
            "env (it must be a pure function of the env)",
          { details: { section: section.name } },
        );
      }
      if (text !== "") parts.push(text);
    }
    const text = parts.join(SECTION_SEPARATOR);
    this.#rendered.set(persona, { sections, input: env, text });
    return text;
  }

  /** The render order of `sections`: the last one again when they are the same sections in the same order. */
  #order(sections: readonly PromptSection[]): readonly PromptSection[] {
    const last = this.#lastOrder;
    if (
      last !== undefined && last.sections.length === sections.length &&
      last.sections.every((section, i) => section === sections[i])
    ) return last.order;
    const order = renderOrder(sections);
    this.#lastOrder = { sections, order };
    return order;
  }

  #add(owner: Context, section: PromptSection): Disposer {
    const frozen: PromptSection = Object.freeze({
      name: section.name,
      priority: section.priority,
      render: section.render,
    });
    if (this.#collect(owner).some((visible) => visible.name === frozen.name)) {
      throw new TerretError(
        "SectionExists",
        `Cannot register prompt section "${frozen.name}": a section with this name is already registered`,
        { details: { name: frozen.name } },
      );
    }
    return this.#sections.add(owner, frozen, `prompt section ${frozen.name}`);
  }

  #collect(ctx: Context): readonly PromptSection[] {
    return this.#sections.view(ctx);
  }
}

/** One assembled prompt and what it was rendered from. */
interface Rendered {
  readonly sections: readonly PromptSection[];
  /** The env it was rendered against (a frozen copy of the input). */
  readonly input: PromptEnv;
  readonly text: string;
}

/** True when `input` gives the same env as `env` was made from (the persona aside). */
function sameInput(env: PromptEnv, input: PromptInput): boolean {
  return env.session_id === input.session_id && env.agent_id === input.agent_id &&
    env.model === input.model && sameRecord(env.capabilities, input.capabilities) &&
    sameList(env.tools, input.tools ?? []) && sameList(env.workdirs, input.workdirs ?? []) &&
    sameRecord(env.vars, input.vars ?? {});
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Shallow equality of two records (`Object.is` on each value, the same keys). */
function sameRecord(a: object | undefined, b: object | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (
      !Object.hasOwn(b, key) ||
      !Object.is((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])
    ) return false;
  }
  return true;
}

/** The sections visible from one context in render order: a nearer section replaces a farther one of its name. */
function renderOrder(sections: readonly PromptSection[]): readonly PromptSection[] {
  const byName = new Map<string, PromptSection>();
  for (const section of sections) byName.set(section.name, section);
  return Object.freeze(
    [...byName.values()].sort((a, b) =>
      a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    ),
  );
}

function renderSection(section: PromptSection, env: PromptEnv): string {
  let text: unknown;
  try {
    text = section.render(env);
  } catch (error) {
    throw new TerretError(
      "PromptSectionFailed",
      `Cannot assemble the prompt: section "${section.name}" failed: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error, details: { section: section.name } },
    );
  }
  if (text === undefined || text === null) return "";
  if (typeof text !== "string") {
    throw new TerretError(
      "PromptSectionFailed",
      `Cannot assemble the prompt: section "${section.name}" returned ${typeof text}, not a string`,
      { details: { section: section.name } },
    );
  }
  return text.replaceAll("\r\n", "\n").trimEnd();
}

/** A frozen env holding copies of the input, so a section can neither change it nor the caller's values. */
function envOf(input: PromptInput, persona: PersonaState): PromptEnv {
  return Object.freeze({
    session_id: input.session_id,
    agent_id: input.agent_id,
    ...(input.model === undefined ? {} : { model: input.model }),
    ...(input.capabilities === undefined
      ? {}
      : { capabilities: Object.freeze({ ...input.capabilities }) }),
    tools: Object.freeze([...(input.tools ?? [])]),
    workdirs: Object.freeze([...(input.workdirs ?? [])]),
    vars: Object.freeze({ ...(input.vars ?? {}) }),
    persona,
  });
}
