/**
 * The tool registry (`tools`): tools registered as effects of their owner context, visible from that context's
 * subtree, offered to the model as schemas, and run through the guarded pipeline.
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
import type { ToolSchema } from "../llm/vocabulary.ts";
import { ToolPolicyKey } from "./allow_list.ts";
import { ApprovalGateKey } from "./approval_gate.ts";
import { DEFAULT_MAX_OUTPUT_BYTES, MIN_MAX_OUTPUT_BYTES } from "./output_cap.ts";
import { type PipelineHost, runPipeline } from "./_pipeline.ts";
import {
  type CompiledTool,
  compileTool,
  type ToolDefinition,
  type ToolInfo,
  type ToolResultPayload,
} from "./tool.ts";

/** A call to run: the `tool/call` payload, plus the parse error when the model's arguments were not JSON. */
export interface ToolCallRequest {
  /** The call id (echoed by the result). */
  readonly id: string;
  /** The tool the model named. */
  readonly name: string;
  /** The parsed arguments; anything but a JSON object is refused as invalid arguments. */
  readonly args: unknown;
  /** Set when the model's argument text could not be parsed (the adapter's `argsError`): the call fails fast. */
  readonly argsError?: { readonly message: string; readonly raw?: string };
}

/** Options for {@linkcode Tools.execute}. */
export interface ExecuteOptions {
  /** The calling agent's context: the waterfalls dispatch on it and the handler receives it. */
  readonly ctx: Context;
  /** The session the call belongs to (the allow list reads its policy; the handler receives it). */
  readonly session_id: string;
  /** The calling agent. */
  readonly agent_id: string;
  /** Cancels the call: it resolves at once as a cancelled error result, and the handler's signal aborts. */
  readonly signal?: AbortSignal;
}

/** Options naming the context whose visible tools are meant (default: the registry's own context). */
export interface VisibleOptions {
  readonly ctx?: Context;
}

/** Options for {@linkcode Tools.offered}. */
export interface OfferedOptions {
  /** The calling agent's context. */
  readonly ctx: Context;
  /** The session whose policy filters the tools. */
  readonly session_id: string;
  readonly signal?: AbortSignal;
}

/**
 * The tool registry (service key `tools`).
 *
 * Contract:
 * - `register` is an effect of `owner`: the tool is visible from `owner` and its descendants (a fork's tools are
 *   invisible to its parent and siblings) and dies with `owner`. A name already visible from `owner` is refused
 *   (`ToolExists`); a bad definition is a `TypeError`. Should an ancestor later register a name a descendant
 *   already has, the nearer (descendant's) definition wins inside that subtree.
 * - `list`, `schemas` are sorted by name (code-unit order), stable for the same registrations.
 * - `execute` never rejects for a tool failure: an unknown tool, invalid arguments, a veto, a denial, a throwing
 *   handler or listener, and an abort all resolve to a result with `is_error: true` and a message for the model.
 *   It rejects (`TypeError`) only for misuse (a missing context, session or agent id, a call without id/name).
 */
export interface Tools {
  /** Registers a tool for as long as `owner` lives. */
  register<A>(owner: Context, def: ToolDefinition<A>): Disposer;
  /** The tool of that name visible from `options.ctx`, or `undefined`. */
  get(name: string, options?: VisibleOptions): ToolInfo | undefined;
  /** Every tool visible from `options.ctx`, sorted by name. */
  list(options?: VisibleOptions): readonly ToolInfo[];
  /** The schemas of every tool visible from `options.ctx`, sorted by name (frozen, shared). */
  schemas(options?: VisibleOptions): readonly ToolSchema[];
  /** The schemas visible from `ctx` that the allow list admits for the session, sorted by name. */
  offered(options: OfferedOptions): Promise<ToolSchema[]>;
  /** Runs one call through the pipeline; resolves to the `tool/result` payload. */
  execute(call: ToolCallRequest, options: ExecuteOptions): Promise<ToolResultPayload>;
  /** The output cap in UTF-8 bytes (the row's `max_output_bytes`). */
  readonly maxOutputBytes: number;
}

/** The tool registry's service key. */
export const ToolsKey: ServiceKey<Tools> = defineService<Tools>(
  "tools",
  "The tool registry: definitions registered as effects, schemas for the model, the guarded pipeline",
);

/** The `tools` row's config. */
export interface ToolsConfig {
  /** The output cap, in UTF-8 bytes. */
  readonly max_output_bytes: number;
}

/** The `tools` row's config schema. */
export const toolsConfig: z.ZodType<ToolsConfig> = z.strictObject({
  max_output_bytes: z.number().int().min(MIN_MAX_OUTPUT_BYTES).max(16 * 1024 * 1024).default(
    DEFAULT_MAX_OUTPUT_BYTES,
  ).describe(
    "The most UTF-8 bytes a tool result may carry to the log and the model, truncation marker included; " +
      "applied after tools/post_execute, so no listener can lift it",
  ),
}) as z.ZodType<ToolsConfig>;

/** One registration, as collected. */
interface Registration {
  readonly compiled: CompiledTool;
  readonly owner: string;
}

interface View {
  readonly byName: ReadonlyMap<string, Registration>;
  readonly infos: readonly ToolInfo[];
  readonly schemas: readonly ToolSchema[];
}

/**
 * The tool registry (plugin `terret-tools`, row `tools`).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createContext } from "@terret/hames";
 * import { ToolRegistry, ToolsKey } from "@terret/core";
 * await using ctx = createContext({ mode: "test" });
 * await ctx.plugin(ToolRegistry, {}).settled();
 * const tools = ctx.get(ToolsKey);
 * tools.register(ctx, {
 *   name: "echo",
 *   description: "Repeats its text",
 *   parameters: z.object({ text: z.string() }),
 *   handler: ({ text }) => text,
 * });
 * console.log(tools.schemas().map((schema) => schema.name)); // ["echo"]
 * ```
 */
export class ToolRegistry extends Service<ToolsConfig> implements Tools {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-tools";
  /** One line for the config catalog. */
  static readonly description =
    "The tool registry (row tools): tools registered as effects, the guarded pipeline, the output cap.";
  /** The service key. */
  static readonly key: ServiceKey<Tools> = ToolsKey;
  /** The config schema. */
  static readonly config: z.ZodType<ToolsConfig> = toolsConfig;

  /** No host permission of its own: the tools registered on it declare theirs through their own rows. */
  static permissions(): HostPermissions {
    return {};
  }

  readonly #tools = new ScopedCollection<Registration, View>((registrations) =>
    this.#derive(registrations)
  );
  /** The last view derived: a context that sees the same registrations shares it (and what is cached on it). */
  #lastView: { readonly registrations: readonly Registration[]; readonly view: View } | undefined;
  /** The schemas offered per policy predicate, for the view they were filtered from. */
  readonly #offered = new WeakMap<
    (name: string) => boolean,
    { readonly view: View; readonly schemas: readonly ToolSchema[] }
  >();

  get maxOutputBytes(): number {
    return this.config.max_output_bytes;
  }

  /** Applies a new output cap in place; registrations are kept. */
  override reconfigure(_config: ToolsConfig): void {}

  register<A>(owner: Context, def: ToolDefinition<A>): Disposer {
    if (owner === null || typeof owner !== "object" || typeof owner.on !== "function") {
      throw new TypeError("Cannot register a tool: the owner must be a Context");
    }
    const compiled = compileTool(def as ToolDefinition<unknown>);
    const name = compiled.info.name;
    const existing = this.#view(owner).byName.get(name);
    if (existing !== undefined) {
      throw new TerretError(
        "ToolExists",
        `Cannot register tool "${name}": a tool with this name is already registered (by "${existing.owner}")`,
        { details: { name } },
      );
    }
    const registration: Registration = { compiled, owner: owner.label };
    return this.#tools.add(owner, registration, `tool ${name}`);
  }

  get(name: string, options: VisibleOptions = {}): ToolInfo | undefined {
    return this.#view(options.ctx ?? this.ctx).byName.get(name)?.compiled.info;
  }

  list(options: VisibleOptions = {}): readonly ToolInfo[] {
    return this.#view(options.ctx ?? this.ctx).infos;
  }

  schemas(options: VisibleOptions = {}): readonly ToolSchema[] {
    return this.#view(options.ctx ?? this.ctx).schemas;
  }

  async offered(options: OfferedOptions): Promise<ToolSchema[]> {
    const policy = this.ctx.maybe(ToolPolicyKey);
    if (policy === undefined) return [];
    if (policy.admits !== undefined) {
      // One predicate for every name; the filtered list is kept per predicate and view (both change whenever
      // an answer or a registration may).
      const admit = await policy.admits({
        session_id: options.session_id,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      const view = this.#view(options.ctx);
      let offered = this.#offered.get(admit);
      if (offered === undefined || offered.view !== view) {
        offered = { view, schemas: view.schemas.filter((schema) => admit(schema.name)) };
        this.#offered.set(admit, offered);
      }
      return offered.schemas.slice();
    }
    const schemas = this.schemas({ ctx: options.ctx });
    const verdicts = await Promise.all(schemas.map((schema) =>
      policy.check(schema.name, {
        session_id: options.session_id,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      })
    ));
    return schemas.filter((_, i) => verdicts[i]!.allowed);
  }

  execute(call: ToolCallRequest, options: ExecuteOptions): Promise<ToolResultPayload> {
    try {
      checkExecute(call, options);
    } catch (error) {
      return Promise.reject(error);
    }
    return runPipeline(this.#host(), call, options);
  }

  #host(): PipelineHost {
    return {
      lookup: (ctx, name) => this.#view(ctx).byName.get(name)?.compiled,
      policy: () => this.ctx.maybe(ToolPolicyKey),
      gate: () => this.ctx.maybe(ApprovalGateKey),
      maxOutputBytes: this.config.max_output_bytes,
      logger: this.ctx.logger,
    };
  }

  #view(ctx: Context): View {
    return this.#tools.view(ctx);
  }

  /** The view of `registrations`: the last one again when they are the same registrations in the same order. */
  #derive(registrations: readonly Registration[]): View {
    const last = this.#lastView;
    if (
      last !== undefined && last.registrations.length === registrations.length &&
      last.registrations.every((registration, i) => registration === registrations[i])
    ) return last.view;
    const view = viewOf(registrations);
    this.#lastView = { registrations, view };
    return view;
  }
}

/** The view of the tools visible from one context: a nearer registration replaces a farther one of its name. */
function viewOf(registrations: readonly Registration[]): View {
  const byName = new Map<string, Registration>();
  for (const registration of registrations) {
    byName.set(registration.compiled.info.name, registration);
  }
  const names = [...byName.keys()].sort(compareCodeUnits);
  const infos = Object.freeze(names.map((name) => byName.get(name)!.compiled.info));
  return { byName, infos, schemas: Object.freeze(infos.map((info) => info.schema)) };
}

/** Orders strings by UTF-16 code units: locale-independent, so the order is the same on every host. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkExecute(call: ToolCallRequest, options: ExecuteOptions): void {
  if (typeof call !== "object" || call === null) {
    throw new TypeError("Cannot execute a tool call: the call must be an object");
  }
  if (typeof call.id !== "string" || call.id === "" || typeof call.name !== "string") {
    throw new TypeError(
      "Cannot execute a tool call: it needs a non-empty string id and a string name",
    );
  }
  if (typeof options?.ctx?.waterfall !== "function") {
    throw new TypeError(`Cannot execute tool call "${call.id}": options.ctx must be a Context`);
  }
  if (typeof options.session_id !== "string" || options.session_id === "") {
    throw new TypeError(
      `Cannot execute tool call "${call.id}": options.session_id must be a string`,
    );
  }
  if (typeof options.agent_id !== "string" || options.agent_id === "") {
    throw new TypeError(`Cannot execute tool call "${call.id}": options.agent_id must be a string`);
  }
}
