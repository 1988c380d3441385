/**
 * The `compactor` seam (the summarizer behind compaction) and its default provider: one model call through the
 * `compactor` llm role, falling back to `main`.
 *
 * @module
 */
import { type Context, defineService, type ServiceKey } from "@terret/hames";
import type { LlmRegistry } from "../llm/llm_registry.ts";
import type { Message, Usage } from "../llm/vocabulary.ts";
import { utilityCall } from "../llm/utility_call.ts";

/** What a compactor is asked to summarize. */
export interface SummarizeInput {
  /** The session being compacted. */
  readonly session_id: string;
  /** The model history the summary replaces (it may begin with an earlier summary). */
  readonly messages: readonly Message[];
  /** Extra instructions (a `compact` frame's `instructions`). */
  readonly instructions?: string | undefined;
  /** The context the model request is dispatched from. */
  readonly ctx?: Context;
  readonly signal?: AbortSignal;
}

/** A summary and what producing it cost. */
export interface Summary {
  /** The summary text: it replaces the summarized messages in every later request, as one user message. */
  readonly summary: string;
  /** The usage of the call(s) that produced it (recorded in `session/compacted`). */
  readonly usage: Usage;
}

/**
 * The summarizer (service key `compactor`).
 *
 * Contract: `summarize` returns a non-empty, self-contained summary of `messages` (what was asked, decided, done,
 * and what is still open: the model continues from it alone); it must not append to the log (the compaction row
 * does, once, with its answer) and must honour `signal`. It rejects (any error; the compaction row logs it and
 * leaves the session untouched) when it cannot summarize.
 */
export interface Compactor {
  summarize(input: SummarizeInput): Promise<Summary>;
}

/** The compactor service key. */
export const CompactorKey: ServiceKey<Compactor> = defineService<Compactor>(
  "compactor",
  "The summarizer behind compaction: summarizes model history into one self-contained message",
);

/** The default instructions of the summary call. */
export const SUMMARY_INSTRUCTIONS =
  "You are compacting the history of a long-running agent session so it fits the model's context window. " +
  "Write a self-contained summary of the conversation below that the agent can continue from without it: the " +
  "user's goals and instructions, decisions taken, files and commands involved (with their absolute paths), " +
  "results obtained, and what is still open or in progress. Be factual and concise; use short sections or " +
  "bullets. Answer with the summary only.";

/**
 * The default compactor: one request to the `compactor` role (or `main`), its system prompt
 * {@linkcode SUMMARY_INSTRUCTIONS}, the history to summarize as its messages, and a final user message asking for
 * the summary (with the caller's extra instructions).
 */
export function roleCompactor(llm: LlmRegistry): Compactor {
  return {
    async summarize(input: SummarizeInput): Promise<Summary> {
      const ask = input.instructions === undefined || input.instructions === ""
        ? "Summarize the conversation above now, following the instructions."
        : `Summarize the conversation above now, following the instructions. Also: ${input.instructions}`;
      const answer = await utilityCall(llm, {
        system: SUMMARY_INSTRUCTIONS,
        messages: [...input.messages, { role: "user", parts: [{ type: "text", text: ask }] }],
      }, {
        role: "compactor",
        ...(input.ctx === undefined ? {} : { ctx: input.ctx }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
      });
      return { summary: answer.text, usage: answer.usage };
    },
  };
}
