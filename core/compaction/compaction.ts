/**
 * Compaction (row `compaction`, plugin `terret-compaction`): when the estimated next request exceeds a fraction of
 * the model's context window, or when asked (a `compact` frame), the history before a recent step boundary is
 * summarized by the `compactor` seam and a durable `session/compacted` replaces it in every later request.
 *
 * @module
 */
import {
  type Context,
  defineService,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import { Llm } from "../llm/llm_registry.ts";
import type { ModelRole, Usage } from "../llm/vocabulary.ts";
import { AgentRequest } from "../loop/events.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SessionProjection } from "../sessions/session_projection.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import { planCompaction } from "./_plan.ts";
import { CompactorKey, roleCompactor } from "./compactor.ts";

/** Options for {@linkcode Compaction.compact}. */
export interface CompactOptions {
  /** Extra instructions for the summary. */
  readonly instructions?: string | undefined;
  /** The context the summary call is dispatched from (an agent's, so its `llm/stream` middleware applies). */
  readonly ctx?: Context;
  readonly signal?: AbortSignal;
}

/**
 * The compaction service (key `compaction`).
 *
 * Contract: `compact` summarizes the session's history before its latest fitting step boundary and appends one
 * `session/compacted`; it resolves with that event, or `undefined` when there is nothing new to summarize. A
 * failed summary appends nothing (the session is untouched), is logged, and rejects with `CompactionFailed`.
 * Compactions of one session run one at a time. `window` is the context window the auto trigger measures against.
 */
export interface Compaction {
  compact(sessionId: string, options?: CompactOptions): Promise<SessionEvent | undefined>;
  /** The context window (tokens) of the model serving `role`. */
  window(role?: ModelRole): number;
}

/** The compaction service key. */
export const CompactionKey: ServiceKey<Compaction> = defineService<Compaction>(
  "compaction",
  "Summarizes old history into a durable session/compacted when a request nears the context window, or on demand",
);

/** The `compaction` row's config. */
export interface CompactionConfig {
  /** Compact automatically before a request whose estimate exceeds `threshold` of the window. */
  readonly auto: boolean;
  /** The fraction of the context window that triggers an automatic compaction. */
  readonly threshold: number;
  /** The fraction of the window the kept recent steps may take. */
  readonly keep: number;
  /** The context window in tokens; default: the model row's `max_context_tokens` (128,000 when unset). */
  readonly context_window?: number | undefined;
}

/** The `compaction` row's config schema. */
export const compactionConfig: z.ZodType<CompactionConfig> = z.strictObject({
  auto: z.boolean().default(true).describe(
    "Compact before a request whose estimated tokens exceed threshold x the context window",
  ),
  threshold: z.number().gt(0).max(1).default(0.8).describe(
    "The fraction of the context window that triggers an automatic compaction",
  ),
  keep: z.number().gt(0).lt(1).default(0.3).describe(
    "The fraction of the context window the kept recent steps may take (at least the latest step is kept)",
  ),
  context_window: z.number().int().positive().optional().describe(
    "The context window in tokens; default: the serving model row's max_context_tokens (capabilities), " +
      "128,000 when that is unset",
  ),
}) as z.ZodType<CompactionConfig>;

/** What the row remembers of a session's latest compaction. */
interface LastCompaction {
  /** The first seq still projected verbatim (1 before any compaction). */
  readonly keptFrom: number;
}

/**
 * The compaction row: provides `compaction`, listens on `agent/request` for the auto trigger, and summarizes
 * through the `compactor` service when one is mounted, else with one call to the `compactor` llm role (falling
 * back to `main`).
 */
export class CompactionService extends Service<CompactionConfig> implements Compaction {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-compaction";
  /** One line for the config catalog. */
  static readonly description =
    "Compaction (row compaction): summarizes old history into session/compacted near the context window or on demand.";
  /** The service key. */
  static readonly key: ServiceKey<Compaction> = CompactionKey;
  /** The log and the model registry. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey, Llm];
  /** The config schema. */
  static readonly config: z.ZodType<CompactionConfig> = compactionConfig;

  /** No host permission of its own. */
  static permissions(): HostPermissions {
    return {};
  }

  #last: SessionProjection<LastCompaction> | undefined;
  readonly #running = new Map<string, Promise<unknown>>();

  override start(): void {
    const sessions = this.ctx.get(SessionsKey);
    this.#last = new SessionProjection<LastCompaction>(this.ctx, sessions, {
      types: ["session/compacted"],
      initial: () => ({ keptFrom: 1 }),
      fold: (_state, event) => ({
        keptFrom: (event.payload as { kept_from_seq?: number }).kept_from_seq ?? event.seq + 1,
      }),
      label: "compaction: last compaction",
    });
    this.ctx.on(AgentRequest, async (payload, next) => {
      if (!this.config.auto) return await next(payload);
      const llm = this.ctx.get(Llm);
      const limit = this.config.threshold * this.window(payload.role);
      if (llm.countTokens(payload.request, { role: payload.role }) <= limit) {
        return await next(payload);
      }
      let event: SessionEvent | undefined;
      try {
        event = await this.compact(payload.session_id);
      } catch {
        // Logged by compact(); the request goes out as it was.
      }
      if (event === undefined) return await next(payload);
      const messages = await sessions.deriveMessages(payload.session_id);
      return await next({ ...payload, request: { ...payload.request, messages } });
    });
  }

  window(role: ModelRole = "main"): number {
    if (this.config.context_window !== undefined) return this.config.context_window;
    const llm = this.ctx.maybe(Llm);
    if (llm === undefined || llm.resolve(role) === undefined) return 128_000;
    return llm.capabilities(role).maxContextTokens;
  }

  /** How many sessions' latest compactions are cached (for tests and diagnostics). */
  get cachedSessions(): number {
    return this.#last?.size ?? 0;
  }

  compact(sessionId: string, options: CompactOptions = {}): Promise<SessionEvent | undefined> {
    const previous = this.#running.get(sessionId) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.#compact(sessionId, options));
    const settled = run.catch(() => {});
    this.#running.set(sessionId, settled);
    void settled.then(() => {
      if (this.#running.get(sessionId) === settled) this.#running.delete(sessionId);
    });
    return run;
  }

  async #compact(sessionId: string, options: CompactOptions): Promise<SessionEvent | undefined> {
    const sessions = this.ctx.get(SessionsKey);
    const signal = options.signal === undefined ? {} : { signal: options.signal };
    const last = await this.#last!.get(sessionId, signal);
    if (last === undefined) {
      throw new TerretError(
        "SessionNotFound",
        `Cannot compact session "${sessionId}": the log does not hold it`,
        { details: { session_id: sessionId } },
      );
    }
    const events = await sessions.read(sessionId, { from_seq: last.keptFrom, ...signal });
    const head = events.at(-1)?.seq ?? 0;
    // The cached derivation (no `upto`) when nothing landed meanwhile; a full read of the log otherwise.
    let history = await sessions.deriveMessages(sessionId, signal);
    if (await sessions.head(sessionId, signal) !== head) {
      history = await sessions.deriveMessages(sessionId, { upto: head, ...signal });
    }
    const plan = planCompaction(events, history, this.config.keep * this.window("main"));
    if (plan === undefined) return undefined;
    const compactor = this.ctx.maybe(CompactorKey) ?? roleCompactor(this.ctx.get(Llm));
    let summary: string;
    let usage: Usage;
    try {
      ({ summary, usage } = await compactor.summarize({
        session_id: sessionId,
        messages: history.slice(0, plan.summarized),
        instructions: options.instructions,
        ...(options.ctx === undefined ? {} : { ctx: options.ctx }),
        ...signal,
      }));
      if (typeof summary !== "string" || summary.trim() === "") {
        throw new TypeError("the compactor returned an empty summary");
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.ctx.logger.log("error", `Cannot compact session "${sessionId}": the summary failed`, {
        session_id: sessionId,
        error,
      });
      throw new TerretError(
        "CompactionFailed",
        `Cannot compact session "${sessionId}": the summary failed: ${message}`,
        { cause: error, details: { session_id: sessionId } },
      );
    }
    return await sessions.append(sessionId, {
      type: "session/compacted",
      payload: {
        summary,
        through_seq: plan.keptFromSeq - 1,
        kept_from_seq: plan.keptFromSeq,
        summarized_messages: plan.summarized,
        usage,
      },
    }, signal);
  }
}
