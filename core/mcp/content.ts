/**
 * Maps an MCP `tools/call` result into the tool result shape the registry logs and the model reads.
 *
 * @module
 */
import type { ImagePart, TextPart } from "../llm/vocabulary.ts";
import type { ToolContent, ToolOutcome } from "../tools/tool.ts";

/** The parts of an MCP `CallToolResult` this mapping reads (the SDK's parsed result satisfies it). */
export interface McpCallResult {
  readonly content?: readonly McpContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: boolean;
}

/** One MCP content block (the SDK's union, loosely typed so newer block types do not fail the mapping). */
export interface McpContentBlock {
  readonly type: string;
  readonly text?: string;
  readonly data?: string;
  readonly mimeType?: string;
  readonly uri?: string;
  readonly name?: string;
  readonly title?: string;
  readonly description?: string;
  readonly resource?: {
    readonly uri: string;
    readonly mimeType?: string;
    readonly text?: string;
    readonly blob?: string;
  };
}

/** How to treat `structuredContent` for the tool that was called. */
export interface StructuredContentCheck {
  /** Whether the tool declared an `outputSchema` (it must then return `structuredContent`, unless it failed). */
  readonly hasOutputSchema: boolean;
  /** Validates `structuredContent` against the output schema; returns why it does not conform, or undefined. */
  readonly validate?: (structured: unknown) => string | undefined;
}

/**
 * Maps an MCP tool result to a {@linkcode ToolOutcome}.
 *
 * Text blocks stay text; images become image parts; an embedded text resource becomes text headed by its URI,
 * an embedded image blob an image part after that header, any other blob a note with its size; a resource link
 * becomes a line with its name and URI; audio becomes a note (the model vocabulary has no audio part). When every
 * part is text the content is one string (parts joined by newlines). Per the spec, `structuredContent` of a tool
 * with an `outputSchema` must conform to it (a result that does not, or that omits it without failing, becomes an
 * error naming the tool), and when the server sent no text block the structured content is serialised as one so
 * the model sees it. `isError: true` maps to `is_error: true` with the server's text kept for the model.
 *
 * @param result the parsed `tools/call` result
 * @param label how to name the tool in messages (`"get-sum" of server "everything"`)
 * @param check the tool's output-schema facts
 */
export function toToolOutcome(
  result: McpCallResult,
  label: string,
  check: StructuredContentCheck = { hasOutputSchema: false },
): ToolOutcome {
  const parts: (TextPart | ImagePart)[] = [];
  for (const block of result.content ?? []) parts.push(...mapBlock(block));
  const failed = result.isError === true;
  const structured = result.structuredContent;
  if (!failed && check.hasOutputSchema) {
    if (structured === undefined) {
      return {
        content:
          `Tool ${label} returned no structured content although it declares an output schema`,
        is_error: true,
      };
    }
    const problem = check.validate?.(structured);
    if (problem !== undefined) {
      return {
        content:
          `Tool ${label} returned structured content that does not match its output schema: ${problem}`,
        is_error: true,
      };
    }
  }
  if (structured !== undefined && !parts.some((part) => part.type === "text")) {
    parts.push({ type: "text", text: JSON.stringify(structured) });
  }
  return { content: joinParts(parts), is_error: failed };
}

/** Collapses all-text parts into one string; keeps the list when an image is among them. */
function joinParts(parts: readonly (TextPart | ImagePart)[]): ToolContent {
  if (parts.every((part) => part.type === "text")) {
    return parts.map((part) => (part as TextPart).text).join("\n");
  }
  return parts;
}

function mapBlock(block: McpContentBlock): (TextPart | ImagePart)[] {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: block.text ?? "" }];
    case "image":
      return [image(block.data ?? "", block.mimeType)];
    case "audio":
      return [text(
        `[audio (${block.mimeType ?? "unknown type"}, ${
          base64Bytes(block.data ?? "")
        } bytes) omitted: audio is not passed to the model]`,
      )];
    case "resource_link": {
      const name = block.title ?? block.name ?? block.uri ?? "resource";
      const details = [block.mimeType, block.description].filter((v) => v !== undefined);
      return [text(
        `[resource link] ${name}: ${block.uri ?? ""}${
          details.length > 0 ? ` (${details.join("; ")})` : ""
        }`,
      )];
    }
    case "resource":
      return embedded(block.resource);
    default:
      return [text(`[content of type "${block.type}" omitted: not supported]`)];
  }
}

function embedded(resource: McpContentBlock["resource"]): (TextPart | ImagePart)[] {
  if (resource === undefined) return [text("[embedded resource without contents]")];
  const mime = resource.mimeType === undefined ? "" : ` (${resource.mimeType})`;
  if (resource.text !== undefined) {
    return [text(`[resource ${resource.uri}${mime}]\n${resource.text}`)];
  }
  const blob = resource.blob ?? "";
  if (resource.mimeType?.startsWith("image/") === true) {
    return [text(`[resource ${resource.uri}${mime}]`), image(blob, resource.mimeType)];
  }
  return [
    text(`[resource ${resource.uri}${mime}: ${base64Bytes(blob)} bytes of binary data omitted]`),
  ];
}

function text(value: string): TextPart {
  return { type: "text", text: value };
}

function image(data: string, mimeType: string | undefined): ImagePart {
  return mimeType === undefined
    ? { type: "image", data }
    : { type: "image", data, media_type: mimeType };
}

/** The decoded size of base64 text. */
function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(clean.length * 3 / 4) - padding);
}
