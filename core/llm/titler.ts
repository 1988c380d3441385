/**
 * Titles (row `titles`, plugin `terret-titler`): after a session's first completed turn, one `session/titled` from
 * the `titler` llm role (falling back to `main`), or the first 40 characters of the first message when the call
 * fails. A titled session is never titled again unless asked.
 *
 * @module
 */
import {
  defineService,
  type HostPermissions,
  Service,
  type ServiceKey,
  TerretError,
} from "@terret/hames";
import { z } from "zod";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SessionEventAppended } from "../sessions/events.ts";
import { SessionProjection } from "../sessions/session_projection.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import { Llm } from "./llm_registry.ts";
import { utilityCall } from "./utility_call.ts";
import type { Part } from "./vocabulary.ts";

/** Options for {@linkcode Titles.title}. */
export interface TitleOptions {
  /** Title the session again even when it has a title. */
  readonly force?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * The titles service (key `titles`).
 *
 * Contract: `title` appends one `session/titled` for a session with a user message and no title yet (or always,
 * with `force`) and resolves with it, or `undefined` when there was nothing to do; a failed model call falls back
 * to the first 40 characters of the first message (`fallback: true`), so only a failed append rejects. `current`
 * is the session's latest title (`undefined`: none, or an unknown session). Automatic titling runs once, after the
 * first `turn/end` with status `completed`; its failures are logged, never surfaced.
 */
export interface Titles {
  title(sessionId: string, options?: TitleOptions): Promise<SessionEvent | undefined>;
  current(
    sessionId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<string | undefined>;
}

/** The titles service key. */
export const TitlesKey: ServiceKey<Titles> = defineService<Titles>(
  "titles",
  "Session titles: one session/titled after the first completed turn, from the titler role or a fallback",
);

/** The `titles` row's config. */
export interface TitlesConfig {
  /** Title a session after its first completed turn. */
  readonly auto: boolean;
  /** The longest title kept (longer answers are cut). */
  readonly max_length: number;
  /** How many characters of the first message the fallback title takes. */
  readonly fallback_length: number;
}

/** The `titles` row's config schema. */
export const titlesConfig: z.ZodType<TitlesConfig> = z.strictObject({
  auto: z.boolean().default(true).describe(
    "Title each session once, after its first completed turn (the titler role, falling back to main)",
  ),
  max_length: z.number().int().min(8).max(200).default(80).describe(
    "The longest title kept; a longer answer is cut",
  ),
  fallback_length: z.number().int().min(8).max(200).default(40).describe(
    "When the titler call fails, the title is this many characters of the first message",
  ),
}) as z.ZodType<TitlesConfig>;

/** The titler's instructions. */
export const TITLE_INSTRUCTIONS =
  "Write a short title (at most eight words) for the conversation that starts with the user's message below. " +
  "Answer with the title only: no quotes, no trailing period.";

/** The titles row (plugin `terret-titler`). */
export class Titler extends Service<TitlesConfig> implements Titles {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-titler";
  /** One line for the config catalog. */
  static readonly description =
    "Titles (row titles): one session/titled after the first completed turn, from the titler role or a fallback.";
  /** The service key. */
  static readonly key: ServiceKey<Titles> = TitlesKey;
  /** The log and the model registry. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey, Llm];
  /** The config schema. */
  static readonly config: z.ZodType<TitlesConfig> = titlesConfig;

  /** No host permission of its own. */
  static permissions(): HostPermissions {
    return {};
  }

  #titles: SessionProjection<string | null> | undefined;
  readonly #inFlight = new Map<string, Promise<SessionEvent | undefined>>();
  readonly #stopping = new AbortController();

  override start(): void {
    const sessions = this.ctx.get(SessionsKey);
    this.#titles = new SessionProjection<string | null>(this.ctx, sessions, {
      types: ["session/titled"],
      initial: () => null,
      fold: (_state, event) => (event.payload as { title: string }).title,
      label: "titles: current title",
    });
    if (!this.config.auto) return;
    this.ctx.on(SessionEventAppended, (event) => {
      if (event.type !== "turn/end") return;
      if ((event.payload as { status?: unknown }).status !== "completed") return;
      if (this.#inFlight.has(event.session_id)) return;
      this.title(event.session_id, { signal: this.#stopping.signal }).catch((error) => {
        if (this.#stopping.signal.aborted) return;
        this.ctx.logger.log("error", `Cannot title session "${event.session_id}"`, {
          session_id: event.session_id,
          error,
        });
      });
    });
  }

  /** Aborts the automatic titles in flight and waits for them to settle. */
  override async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.allSettled([...this.#inFlight.values()]);
  }

  /** How many sessions' current titles are cached (a session leaves the cache when its agent leaves memory). */
  get cachedSessions(): number {
    return this.#titles?.size ?? 0;
  }

  async current(
    sessionId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<string | undefined> {
    return (await this.#titles!.get(sessionId, options)) ?? undefined;
  }

  title(sessionId: string, options: TitleOptions = {}): Promise<SessionEvent | undefined> {
    const running = this.#inFlight.get(sessionId);
    if (running !== undefined && options.force !== true) return running;
    const run = this.#title(sessionId, options).finally(() => {
      if (this.#inFlight.get(sessionId) === run) this.#inFlight.delete(sessionId);
    });
    this.#inFlight.set(sessionId, run);
    return run;
  }

  async #title(sessionId: string, options: TitleOptions): Promise<SessionEvent | undefined> {
    const sessions = this.ctx.get(SessionsKey);
    const signal = options.signal === undefined ? {} : { signal: options.signal };
    const current = await this.#titles!.get(sessionId, signal);
    if (current === undefined) {
      throw new TerretError(
        "SessionNotFound",
        `Cannot title session "${sessionId}": the log does not hold it`,
        { details: { session_id: sessionId } },
      );
    }
    if (current !== null && options.force !== true) return undefined;
    const [first] = await sessions.read(sessionId, {
      types: ["user/message"],
      limit: 1,
      ...signal,
    });
    if (first === undefined) return undefined;
    const text = textOf((first.payload as { content: unknown }).content);
    let payload: Record<string, unknown>;
    try {
      const answer = await utilityCall(this.ctx.get(Llm), {
        system: TITLE_INSTRUCTIONS,
        messages: [{ role: "user", parts: [{ type: "text", text }] }],
      }, { role: "titler", ...signal });
      const title = cleanTitle(answer.text, this.config.max_length);
      if (title === "") throw new TypeError("the titler answered an empty title");
      payload = { title, usage: answer.usage };
    } catch (error) {
      this.ctx.logger.log(
        "warn",
        `The titler failed for session "${sessionId}"; using the fallback`,
        {
          session_id: sessionId,
          error,
        },
      );
      const usage = (error as { details?: { usage?: unknown } }).details?.usage;
      payload = {
        title: fallbackTitle(text, this.config.fallback_length),
        fallback: true,
        ...(usage === undefined ? {} : { usage }),
      };
    }
    return await sessions.append(sessionId, { type: "session/titled", payload }, signal);
  }
}

/** The text of a message's content (text parts joined by spaces). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Part[]).flatMap((part) => part.type === "text" ? [part.text] : []).join(" ");
}

/**
 * The fallback title: the first `length` characters of the first message, whitespace collapsed (never cutting a
 * surrogate pair).
 *
 * @example
 * ```ts
 * import { fallbackTitle } from "@terret/core/llm";
 * console.log(fallbackTitle("Fix the   flaky test\nin the ws suite, please", 20)); // "Fix the flaky test i"
 * ```
 */
export function fallbackTitle(text: string, length = 40): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= length ? flat : chars.slice(0, length).join("").trimEnd();
}

function cleanTitle(answer: string, max: number): string {
  const line = answer.split("\n").find((each) => each.trim() !== "") ?? "";
  const bare = line.trim().replace(/^["'“”‘’*#\s]+|["'“”‘’*\s.]+$/g, "").replace(/^title:\s*/i, "");
  const chars = [...bare];
  return chars.length <= max ? bare : chars.slice(0, max).join("").trimEnd();
}
