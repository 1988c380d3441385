/**
 * Tool definitions: what a tool declares (name, description, parameters, handler and its honest metadata), what
 * its handler receives, what it may return, and the names the registry accepts.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { z } from "zod";
import type { ImagePart, TextPart, ToolSchema } from "../llm/vocabulary.ts";
import { type JsonSchema, type SchemaIssue, validateJsonSchema } from "./json_schema.ts";

/** How a tool may run beside the other calls of one assistant message (the loop's tool barrier). */
export type ToolConcurrency = "parallel" | "serial";

/** Whether a call needs a human verdict: metadata for the approvals row; without one, the allow list decides. */
export type ToolApproval = "never" | "policy" | "always";

/**
 * What a tool does, for an interface's view of its calls (the Agent Client Protocol's tool kinds): `read`, `edit`,
 * `delete`, `move`, `search`, `execute`, `think`, `fetch`, or `other`. A hint only: policy never reads it.
 */
export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "other";

/** The tool kinds, in the order {@linkcode ToolKind} lists them. */
export const TOOL_KINDS: readonly ToolKind[] = Object.freeze([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "other",
]);

/** A tool result's content: text, or text and image parts (exactly `tool/result`'s `content`). */
export type ToolContent = string | readonly (TextPart | ImagePart)[];

/** A finished call's content and error flag. */
export interface ToolOutcome {
  readonly content: ToolContent;
  readonly is_error: boolean;
  /** Structured data for clients and the log, never shown to the model (see {@linkcode ToolOutput.details}). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What `tools.execute` resolves to: exactly the `tool/result` payload. */
export interface ToolResultPayload extends ToolOutcome {
  /** The id of the call it answers. */
  readonly id: string;
  /** The name the model called. */
  readonly name: string;
}

/**
 * What a handler receives beside its arguments: the run it belongs to, taken from the caller of `tools.execute`
 * and never from the arguments, so a model-forged `session_id` argument cannot redirect a handler.
 */
export interface ToolRun {
  /** Aborted when the call is cancelled; cooperative handlers stop promptly. */
  readonly signal: AbortSignal;
  /** The session the call belongs to. */
  readonly session_id: string;
  /** The agent making the call. */
  readonly agent_id: string;
  /** The call id (the `tool/call` and `tool/result` id). */
  readonly call_id: string;
  /** The calling agent's context: per-agent services resolve through it. */
  readonly ctx: Context;
}

/** What a handler returns in full: content and whether it is an error addressed to the model. */
export interface ToolOutput {
  readonly content: ToolContent;
  readonly is_error?: boolean;
  /**
   * Structured data recorded on the durable `tool/result` as `details` (a JSON object) and never projected into the
   * model's history: what clients and roll-ups read (a `Task` result's child session id, status and usage).
   */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * A tool's implementation.
 *
 * Contract: returns (or resolves to) a string, a list of text/image parts, a {@linkcode ToolOutput}, or nothing
 * (empty content); any other value is JSON-encoded. Throwing (or rejecting) is how a handler reports failure: the
 * registry turns it into an `is_error` result carrying the error's message, so a handler must not put secrets in
 * error messages. It should honour `run.signal`; a call whose signal aborts resolves at once as cancelled whether
 * or not the handler stops. It must not trust `session_id`-like fields of `args`: its session is `run`'s.
 */
export type ToolHandler<A> = (
  args: A,
  run: ToolRun,
) => ToolContent | ToolOutput | void | Promise<ToolContent | ToolOutput | void>;

/**
 * A tool definition.
 *
 * `parameters` is a zod schema over the arguments object (the model sees its input JSON Schema, made with
 * `z.toJSONSchema`; the handler gets the parsed output, defaults applied) or, for tools that arrive with one (MCP),
 * a raw JSON Schema object with `type: "object"`, checked by {@linkcode validateJsonSchema}.
 */
export interface ToolDefinition<A = Record<string, unknown>> {
  /** `Read`, `terminal_open`, `mcp__<server>__<tool>`: must match {@linkcode TOOL_NAME_PATTERN}. */
  readonly name: string;
  /** What the tool does and when to use it, for the model. */
  readonly description: string;
  /** The arguments schema. */
  readonly parameters: z.ZodType<A> | JsonSchema;
  /** The implementation. */
  readonly handler: ToolHandler<A>;
  /** Whether the tool changes anything outside the call (default `true`: say `false` only when it is true). */
  readonly mutating?: boolean;
  /** `parallel` tools run together within a run of adjacent parallel calls; default `serial` (a barrier of one). */
  readonly concurrency?: ToolConcurrency;
  /** Approval metadata (default `policy`). */
  readonly approval?: ToolApproval;
  /** What the tool does, for interfaces (default `other`). */
  readonly kind?: ToolKind;
}

/** A registered tool's public description (no handler). */
export interface ToolInfo {
  readonly name: string;
  readonly description: string;
  /** The JSON Schema the model is offered. */
  readonly parameters: JsonSchema;
  readonly mutating: boolean;
  readonly concurrency: ToolConcurrency;
  readonly approval: ToolApproval;
  /** What the tool does, for interfaces. */
  readonly kind: ToolKind;
  /** The `{name, description, parameters}` offered to the model (frozen, shared). */
  readonly schema: ToolSchema;
}

/**
 * The tool names the registry accepts: a letter, then up to 63 letters, digits, `_` or `-` (what every provider
 * accepts as a function name; no glob characters, so a name is never mistaken for a pattern).
 */
export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const MCP_NAME = /^mcp__([A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*)__([A-Za-z0-9][A-Za-z0-9_-]*)$/;

/**
 * Identity function that fixes a tool definition's types (the handler's `args` are the schema's output).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineTool } from "@terret/core";
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Repeats its text",
 *   parameters: z.object({ text: z.string() }),
 *   mutating: false,
 *   concurrency: "parallel",
 *   approval: "never",
 *   handler: ({ text }) => text,
 * });
 * console.log(echo.name); // "echo"
 * ```
 */
export function defineTool<A>(def: ToolDefinition<A>): ToolDefinition<A> {
  return def;
}

/**
 * Builds the name of an MCP server's tool: `mcp__<server>__<tool>`.
 *
 * @throws {TypeError} when the server name is not letters and digits in runs joined by single `-`/`_`, the tool
 *   name is not letters, digits, `_` and `-`, or the result is longer than 64 characters
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`;
  const parsed = parseMcpToolName(name);
  if (parsed?.server !== server || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Cannot name MCP tool "${tool}" of server "${server}": "${name}" must match ${MCP_NAME} and be at most 64 characters`,
    );
  }
  return name;
}

/** Splits `mcp__<server>__<tool>` into its parts; `undefined` for any other name. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  const match = MCP_NAME.exec(name);
  return match === null ? undefined : { server: match[1]!, tool: match[2]! };
}

/** The outcome of validating arguments. */
export type ArgsCheck =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** A definition checked and compiled for the registry. */
export interface CompiledTool {
  readonly info: ToolInfo;
  readonly handler: ToolHandler<unknown>;
  validate(args: Record<string, unknown>): Promise<ArgsCheck>;
}

/**
 * Checks a definition and compiles it.
 *
 * @throws {TypeError} naming the tool and the fault: a bad name, an empty description, a handler that is not a
 *   function, bad metadata, or parameters that are neither a zod schema nor an object JSON Schema (or a zod schema
 *   JSON Schema cannot express)
 */
export function compileTool(def: ToolDefinition<unknown>): CompiledTool {
  const name = def?.name;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Cannot register tool ${
        JSON.stringify(String(name))
      }: its name must match ${TOOL_NAME_PATTERN}`,
    );
  }
  const fail = (why: string): never => {
    throw new TypeError(`Cannot register tool "${name}": ${why}`);
  };
  if (name.startsWith("mcp__") && parseMcpToolName(name) === undefined) {
    fail("a name starting with mcp__ must read mcp__<server>__<tool>");
  }
  if (typeof def.description !== "string" || def.description.trim() === "") {
    fail("its description must be a non-empty string");
  }
  if (typeof def.handler !== "function") fail("its handler must be a function");
  const mutating = def.mutating ?? true;
  const concurrency = def.concurrency ?? "serial";
  const approval = def.approval ?? "policy";
  const kind = def.kind ?? "other";
  if (typeof mutating !== "boolean") fail("mutating must be a boolean");
  if (concurrency !== "parallel" && concurrency !== "serial") {
    fail(`concurrency must be "parallel" or "serial", got ${JSON.stringify(concurrency)}`);
  }
  if (!["never", "policy", "always"].includes(approval)) {
    fail(`approval must be "never", "policy" or "always", got ${JSON.stringify(approval)}`);
  }
  if (!TOOL_KINDS.includes(kind)) {
    fail(`kind must be one of ${TOOL_KINDS.join(", ")}, got ${JSON.stringify(kind)}`);
  }
  const { parameters, validate } = compileParameters(def.parameters, fail);
  const schema: ToolSchema = deepFreeze({ name, description: def.description, parameters });
  return {
    info: Object.freeze({
      name,
      description: def.description,
      parameters,
      mutating,
      concurrency,
      approval,
      kind,
      schema,
    }),
    handler: def.handler as ToolHandler<unknown>,
    validate,
  };
}

function compileParameters(
  parameters: unknown,
  fail: (why: string) => never,
): { parameters: JsonSchema; validate: CompiledTool["validate"] } {
  if (isZodSchema(parameters)) {
    let json: Record<string, unknown>;
    try {
      json = z.toJSONSchema(parameters, { io: "input", unrepresentable: "throw" }) as Record<
        string,
        unknown
      >;
    } catch (error) {
      return fail(`its zod parameters cannot be expressed as JSON Schema: ${messageOf(error)}`);
    }
    delete json.$schema;
    if (json.type !== "object") fail("its parameters must describe an object");
    return {
      parameters: deepFreeze(json),
      validate: async (args) => {
        const parsed = await parameters.safeParseAsync(args);
        if (parsed.success) return { ok: true, value: parsed.data as Record<string, unknown> };
        return {
          ok: false,
          issues: parsed.error.issues.map((issue) => ({
            path: issue.path.map((key) => typeof key === "number" ? key : String(key)),
            message: issue.message,
          })),
        };
      },
    };
  }
  if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) {
    return fail("its parameters must be a zod schema or a JSON Schema object");
  }
  const json = structuredClone(parameters) as Record<string, unknown>;
  if (json.type !== "object") fail('its JSON Schema parameters must have type "object"');
  delete json.$schema;
  const frozen = deepFreeze(json);
  return {
    parameters: frozen,
    validate: (args) => {
      const issues = validateJsonSchema(frozen, args);
      return Promise.resolve(
        issues.length === 0 ? { ok: true, value: args } : { ok: false, issues },
      );
    },
  };
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === "object" && value !== null && "_zod" in value &&
    typeof (value as { safeParseAsync?: unknown }).safeParseAsync === "function";
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The message of an error-like value. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
