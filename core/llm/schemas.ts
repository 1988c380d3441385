/**
 * Zod schemas for the model vocabulary: the runtime contract of what crosses the `llm/stream` waterfall (checked at
 * dispatch when a context validates payloads) and a validator for anything that stores or ships messages. Objects
 * are loose: required fields and their types are checked, additional fields pass (as in the session events).
 *
 * @module
 */
import { z } from "zod";
import type { LlmRequest, Message, ModelRole, Part } from "./vocabulary.ts";

const TextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string() });

const ImagePartSchema = z.looseObject({
  type: z.literal("image"),
  url: z.string().optional(),
  data: z.string().optional(),
  media_type: z.string().optional(),
}).refine((part) => part.url !== undefined || part.data !== undefined, {
  message: "An image part needs `url` or `data`",
});

/** Any message part. */
export const PartSchema: z.ZodType<Part> = z.union([
  TextPartSchema,
  ImagePartSchema,
  z.looseObject({
    type: z.literal("thinking"),
    text: z.string(),
    signature: z.string().optional(),
  }),
  z.looseObject({
    type: z.literal("tool_call"),
    id: z.string(),
    name: z.string(),
    args: z.record(z.string(), z.unknown()),
  }),
  z.looseObject({
    type: z.literal("tool_result"),
    id: z.string(),
    name: z.string(),
    content: z.union([z.string(), z.array(z.union([TextPartSchema, ImagePartSchema]))]),
    is_error: z.boolean(),
  }),
]) as z.ZodType<Part>;

/** One message of model history. */
export const MessageSchema: z.ZodType<Message> = z.looseObject({
  role: z.enum(["user", "assistant", "tool"]),
  parts: z.array(PartSchema),
}) as z.ZodType<Message>;

/** The model roles. */
export const ModelRoleSchema: z.ZodType<ModelRole> = z.enum([
  "main",
  "titler",
  "compactor",
  "subagent",
]);

/** A provider-neutral model request. */
export const LlmRequestSchema: z.ZodType<LlmRequest> = z.looseObject({
  system: z.string().optional(),
  messages: z.array(MessageSchema),
  tools: z.array(
    z.looseObject({
      name: z.string().min(1),
      description: z.string(),
      parameters: z.record(z.string(), z.unknown()),
    }),
  ).optional(),
  model: z.string().min(1).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
}) as z.ZodType<LlmRequest>;
