/**
 * Encoding of provider-neutral requests as Chat Completions request bodies (OpenRouter's dialect, which other
 * OpenAI-compatible servers accept or ignore).
 *
 * @module
 */
import type {
  ImagePart,
  LlmRequest,
  Message,
  TextPart,
  ThinkingPart,
  ToolCallPart,
} from "../vocabulary.ts";

/** A Chat Completions message. */
export type ChatMessage = Readonly<Record<string, unknown>> & { readonly role: string };

/** What the adapter's config contributes to every body. */
export interface EncodeOptions {
  /** The model slug used when the request names none. */
  readonly model: string;
  /** Extra body fields from config; the request's own `params` override them. */
  readonly params?: Readonly<Record<string, unknown>>;
}

/**
 * Builds the streaming Chat Completions body of a request.
 *
 * Precedence: `stream_options.include_usage` (needed by OpenAI and vLLM for usage; a no-op on OpenRouter), then the
 * configured params, then the request's params, then the fields the adapter owns (`model`, `messages`, `tools`,
 * `stream`), which params cannot override.
 *
 * Messages: the system prompt first; `user` parts as a string when they are a single text part, else as `text` and
 * `image_url` parts; `assistant` text joined into `content` (`null` with only tool calls), tool calls with their
 * arguments as a JSON string, thinking replayed as `reasoning_details` when the last signed thinking part carries
 * them (see `ChatCompletionsDecoder`) or as `reasoning` text otherwise; each tool result as a `tool` message.
 */
export function encodeChatRequest(
  request: LlmRequest,
  options: EncodeOptions,
): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined && request.system !== "") {
    messages.push({ role: "system", content: request.system });
  }
  for (const message of request.messages) messages.push(...encodeMessage(message));
  const body: Record<string, unknown> = {
    stream_options: { include_usage: true },
    ...options.params,
    ...request.params,
    model: request.model ?? options.model,
    messages,
    stream: true,
  };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  return body;
}

/**
 * The JSON text of what {@linkcode encodeChatRequest} builds, `JSON.stringify(encodeChatRequest(request, options))`
 * byte for byte, reusing the JSON of what `cache` holds: each frozen message's encoding and each tool schema's
 * entry are serialized once, however many requests carry them (a session's history is sent again every step).
 *
 * @param cache the encodings kept so far (one per adapter: frozen messages and schemas never change)
 */
export function encodeChatRequestJson(
  request: LlmRequest,
  options: EncodeOptions,
  cache: EncodeCache,
): string {
  const parts: string[] = [];
  if (request.system !== undefined && request.system !== "") {
    parts.push(JSON.stringify({ role: "system", content: request.system }));
  }
  for (const message of request.messages) {
    // Only a deeply frozen value is kept (freezing cannot be undone, so its JSON never changes).
    let json = cache.messages.get(message);
    if (json === undefined) {
      json = encodeMessage(message).map((encoded) => JSON.stringify(encoded)).join(",");
      if (deeplyFrozen(message)) cache.messages.set(message, json);
    }
    if (json !== "") parts.push(json);
  }
  let tools: string | undefined;
  if (request.tools !== undefined && request.tools.length > 0) {
    const entries: string[] = [];
    for (const tool of request.tools) {
      let json = cache.tools.get(tool);
      if (json === undefined) {
        json = JSON.stringify({
          type: "function",
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        });
        if (deeplyFrozen(tool)) cache.tools.set(tool, json);
      }
      entries.push(json);
    }
    tools = `[${entries.join(",")}]`;
  }
  // The body's own fields in `encodeChatRequest`'s order (params may have placed `messages` or `tools` earlier),
  // with the two lists spliced in as JSON; every other value serialized as `JSON.stringify` would.
  const body = encodeChatRequest({ ...request, messages: [] }, options);
  let out = "{";
  for (const key of Object.keys(body)) {
    const value = key === "messages"
      ? `[${parts.join(",")}]`
      : key === "tools" && tools !== undefined
      ? tools
      : JSON.stringify(body[key]);
    if (value === undefined) continue;
    out += `${out === "{" ? "" : ","}${JSON.stringify(key)}:${value}`;
  }
  return `${out}}`;
}

/** The encodings {@linkcode encodeChatRequestJson} reuses: deeply frozen messages and tool schemas to their JSON. */
export interface EncodeCache {
  readonly messages: WeakMap<Message, string>;
  readonly tools: WeakMap<object, string>;
}

/** True when `value` and everything it holds is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const child of Object.values(value)) if (!deeplyFrozen(child)) return false;
  return true;
}

/** Encodes one message (a `tool` message may hold several results, each becoming its own message). */
function encodeMessage(message: Message): ChatMessage[] {
  switch (message.role) {
    case "user":
      return [{ role: "user", content: encodeContent(message.parts.filter(isUserPart)) }];
    case "assistant":
      return [encodeAssistant(message)];
    case "tool":
      return message.parts.flatMap((part) =>
        part.type === "tool_result"
          ? [{
            role: "tool",
            tool_call_id: part.id,
            content: typeof part.content === "string" ? part.content : encodeParts(part.content),
          }]
          : []
      );
  }
}

function encodeAssistant(message: Message): ChatMessage {
  let text = "";
  const calls: ToolCallPart[] = [];
  const thinking: ThinkingPart[] = [];
  for (const part of message.parts) {
    if (part.type === "text") text += part.text;
    else if (part.type === "tool_call") calls.push(part);
    else if (part.type === "thinking") thinking.push(part);
  }
  const out: Record<string, unknown> = {
    role: "assistant",
    content: text === "" && calls.length > 0 ? null : text,
  };
  if (calls.length > 0) {
    out.tool_calls = calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
  }
  const details = replayDetails(thinking);
  if (details !== undefined) out.reasoning_details = details;
  else {
    const reasoning = thinking.map((part) => part.text).join("");
    if (reasoning !== "") out.reasoning = reasoning;
  }
  return out as ChatMessage;
}

/** The reasoning blocks of the last thinking part whose signature is a JSON array of `reasoning.*` blocks. */
function replayDetails(thinking: readonly ThinkingPart[]): unknown[] | undefined {
  for (let i = thinking.length - 1; i >= 0; i--) {
    const signature = thinking[i]!.signature;
    if (signature === undefined || !signature.startsWith("[")) continue;
    try {
      const parsed: unknown = JSON.parse(signature);
      if (
        Array.isArray(parsed) && parsed.length > 0 &&
        parsed.every((block) =>
          typeof block === "object" && block !== null &&
          String((block as { type?: unknown }).type).startsWith("reasoning.")
        )
      ) return parsed;
    } catch {
      // Not ours: a signature from another adapter replays as plain reasoning text.
    }
  }
  return undefined;
}

function isUserPart(part: Message["parts"][number]): part is TextPart | ImagePart {
  return part.type === "text" || part.type === "image";
}

function encodeContent(parts: readonly (TextPart | ImagePart)[]): string | unknown[] {
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === "text") return only.text;
  return encodeParts(parts);
}

function encodeParts(parts: readonly (TextPart | ImagePart)[]): unknown[] {
  return parts.map((part) =>
    part.type === "text"
      ? { type: "text", text: part.text }
      : { type: "image_url", image_url: { url: imageUrl(part) } }
  );
}

function imageUrl(part: ImagePart): string {
  if (part.url !== undefined) return part.url;
  return `data:${part.media_type ?? "image/png"};base64,${part.data ?? ""}`;
}
