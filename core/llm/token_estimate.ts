/**
 * The heuristic token count adapters fall back on when they have no tokenizer: about four characters of text per
 * token, plus fixed overheads for messages, tool schemas and images.
 *
 * @module
 */
import type { LlmRequest, Part } from "./vocabulary.ts";

/** Characters per token for English text and code with the common BPE tokenizers (a deliberate overestimate). */
const CHARS_PER_TOKEN = 4;
/** Role markers and separators each message costs. */
const MESSAGE_OVERHEAD = 4;
/** A flat charge per image (a ~1 megapixel image costs 1,000–1,600 tokens with the main vendors). */
const IMAGE_TOKENS = 1_200;

/**
 * Estimates the prompt tokens of a request without I/O: text length over four, rounded up, plus per-message
 * overhead, the JSON of tool schemas and arguments, and a flat charge per image.
 *
 * @example
 * ```ts
 * import { estimateTokens } from "@terret/core/llm";
 * estimateTokens({ messages: [{ role: "user", parts: [{ type: "text", text: "hello world!" }] }] }); // 7
 * ```
 *
 * @param cache sizes of deeply frozen messages and schemas measured before (see {@linkcode TokenEstimateCache})
 */
export function estimateTokens(request: LlmRequest, cache?: TokenEstimateCache): number {
  let chars = request.system?.length ?? 0;
  let fixed = request.system === undefined ? 0 : MESSAGE_OVERHEAD;
  for (const tool of request.tools ?? []) {
    let size = cache?.get(tool)?.[0];
    if (size === undefined) {
      size = tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length;
      if (cache !== undefined && deeplyFrozen(tool)) cache.set(tool, [size, 0]);
    }
    chars += size;
  }
  for (const message of request.messages) {
    let size = cache?.get(message);
    if (size === undefined) {
      size = [0, MESSAGE_OVERHEAD];
      for (const part of message.parts) {
        const counted = partSize(part);
        size[0] += counted.chars;
        size[1] += counted.images * IMAGE_TOKENS;
      }
      if (cache !== undefined && deeplyFrozen(message)) cache.set(message, size);
    }
    chars += size[0];
    fixed += size[1];
  }
  return fixed + Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * What {@linkcode estimateTokens} may reuse: the sizes (characters, fixed tokens) of deeply frozen messages and tool
 * schemas it has measured (freezing cannot be undone, so they never change). One per adapter: a session's history
 * is measured again every step.
 */
export type TokenEstimateCache = WeakMap<object, [chars: number, fixed: number]>;

/** True when `value` and everything it holds is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const child of Object.values(value)) if (!deeplyFrozen(child)) return false;
  return true;
}

function partSize(part: Part): { chars: number; images: number } {
  switch (part.type) {
    case "text":
    case "thinking":
      return { chars: part.text.length, images: 0 };
    case "image":
      return { chars: 0, images: 1 };
    case "tool_call":
      return { chars: part.name.length + JSON.stringify(part.args).length, images: 0 };
    case "tool_result": {
      if (typeof part.content === "string") return { chars: part.content.length, images: 0 };
      let chars = 0;
      let images = 0;
      for (const item of part.content) {
        if (item.type === "text") chars += item.text.length;
        else images++;
      }
      return { chars, images };
    }
  }
}
