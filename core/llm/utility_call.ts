/**
 * One utility model call (the compactor's summary, the titler's title): a request through the `llm` registry for
 * a role (falling back to `main`), read to its end for its text and usage.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { TerretError } from "../errors.ts";
import type { LlmRegistry } from "./llm_registry.ts";
import type { LlmRequest, ModelRole, Usage } from "./vocabulary.ts";

/** What a utility call answered. */
export interface UtilityAnswer {
  /** The text of the answer (thinking excluded), trimmed. */
  readonly text: string;
  /** What the provider reported for the call (zeros when it reported nothing). */
  readonly usage: Usage;
}

/** Options for {@linkcode utilityCall}. */
export interface UtilityCallOptions {
  /** The role to ask (falling back to `main`). */
  readonly role: ModelRole;
  /** The context the request is dispatched from (`llm/stream` middleware on it applies). */
  readonly ctx?: Context;
  readonly signal?: AbortSignal;
}

/**
 * Sends `request` to the model serving `role` and collects its text.
 *
 * @throws {TerretError} `UtilityCallFailed` when the stream ends with an error or answers no text (its details carry
 *   the usage when the provider reported one); `LlmMissing` when no adapter serves the role or `main`
 */
export async function utilityCall(
  llm: LlmRegistry,
  request: LlmRequest,
  options: UtilityCallOptions,
): Promise<UtilityAnswer> {
  let text = "";
  let usage: Usage | undefined;
  const stream = llm.stream(request, {
    role: options.role,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.ctx === undefined ? {} : { ctx: options.ctx }),
  });
  for await (const event of stream) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "usage") usage = event.usage;
    else if (event.type === "error") {
      throw new TerretError(
        "UtilityCallFailed",
        `Cannot complete the ${options.role} call: ${event.error.message}`,
        {
          details: {
            role: options.role,
            kind: event.error.kind,
            ...(usage === undefined ? {} : { usage }),
          },
        },
      );
    }
  }
  text = text.trim();
  if (text === "") {
    throw new TerretError(
      "UtilityCallFailed",
      `Cannot complete the ${options.role} call: the model answered no text`,
      { details: { role: options.role, ...(usage === undefined ? {} : { usage }) } },
    );
  }
  return { text, usage: usage ?? { input_tokens: 0, output_tokens: 0 } };
}
