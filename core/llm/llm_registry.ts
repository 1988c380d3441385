/**
 * The `llm` service: the registry of model adapters by role, through which every model request goes.
 *
 * @module
 */
import { z } from "zod";
import {
  type Context,
  defineService,
  type Disposer,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { LlmStream, type LlmStreamPayload } from "./events.ts";
import type {
  HttpTransport,
  LlmAdapter,
  LlmCapabilities,
  LlmRequest,
  ModelRole,
  StreamEvent,
} from "./vocabulary.ts";

/** One adapter registration: the role it serves and the adapter. */
export interface LlmRegistration {
  /** The role served. */
  readonly role: ModelRole;
  /** The adapter serving it. */
  readonly adapter: LlmAdapter;
}

/** Options of {@linkcode LlmRegistry.stream}. */
export interface LlmRequestOptions {
  /** The model role (default `main`; a role without an adapter falls back to `main`). */
  readonly role?: ModelRole;
  /** Aborts the request. */
  readonly signal?: AbortSignal;
  /**
   * The context to dispatch `llm/stream` from (default: the registry's own). Pass an agent's forked context so
   * middleware registered on that fork applies.
   */
  readonly ctx?: Context;
  /** An HTTP transport replacing the adapter's own (normally set by middleware, not callers). */
  readonly transport?: HttpTransport;
}

/**
 * The registry of model adapters keyed by model role, provided under the `llm` key.
 *
 * Adapter plugins (config rows `llm.main`, `llm.titler`, …) register their adapter for a role as an effect of their
 * own context, so it is withdrawn when the row is unloaded or reconfigured. Requests go through
 * {@linkcode LlmRegistry.stream}, which dispatches the `llm/stream` waterfall around the adapter.
 *
 * Contract: `stream` throws only for misconfiguration (`LlmMissing`: no adapter for the role or for `main`; or
 * what a middleware throws synchronously); provider and transport failures arrive as the stream's `error` event.
 */
export class LlmRegistry extends Service<Readonly<Record<string, never>>> {
  /** The plugin name config rows use. */
  static readonly pluginName: string = "terret-llm";
  /** One line for the config catalog. */
  static readonly description: string =
    "The model adapter registry (`llm`): adapters by role, requests through the `llm/stream` waterfall";
  /** The service key. */
  static readonly key: ServiceKey<LlmRegistry> = defineService<LlmRegistry>(
    "llm",
    "Model adapters by role; every request goes through the llm/stream waterfall",
  );
  /** No configuration. */
  static readonly config: z.ZodType<Readonly<Record<string, never>>> = z.object({}).strict()
    .default({}) as unknown as z.ZodType<Readonly<Record<string, never>>>;

  /** No host permission of its own: the registry only holds adapters; each adapter row declares its own. */
  static permissions(): HostPermissions {
    return {};
  }

  readonly #adapters = new Map<ModelRole, LlmAdapter>();

  /**
   * Registers `adapter` for `role` as an effect of `owner`: disposing `owner` (or the returned disposer) removes it.
   *
   * @throws {TerretError} `LlmRoleTaken` when another adapter already serves the role
   */
  register(owner: Context, registration: LlmRegistration): Disposer {
    const { role, adapter } = registration;
    return owner.effect(() => {
      if (this.#adapters.has(role)) {
        throw new TerretError(
          "LlmRoleTaken",
          `Cannot register a model adapter for role "${role}": another adapter already serves it`,
        );
      }
      this.#adapters.set(role, adapter);
      return () => {
        if (this.#adapters.get(role) === adapter) this.#adapters.delete(role);
      };
    }, `llm role ${role}`);
  }

  /** The roles with an adapter registered, in registration order. */
  roles(): ModelRole[] {
    return [...this.#adapters.keys()];
  }

  /** The role that serves requests for `role`: itself when registered, else `main` when registered. */
  resolve(role: ModelRole = "main"): ModelRole | undefined {
    if (this.#adapters.has(role)) return role;
    return this.#adapters.has("main") ? "main" : undefined;
  }

  /**
   * The adapter serving `role` (falling back to `main`).
   *
   * @throws {TerretError} `LlmMissing` when neither `role` nor `main` has an adapter
   */
  adapter(role: ModelRole = "main"): LlmAdapter {
    const served = this.resolve(role);
    if (served === undefined) {
      const also = role === "main" ? "" : ' or for "main"';
      throw new TerretError(
        "LlmMissing",
        `Cannot resolve a model adapter for role "${role}": none is registered for it${also}`,
        { details: { role } },
      );
    }
    return this.#adapters.get(served)!;
  }

  /** The capabilities of the adapter serving `role`. */
  capabilities(role: ModelRole = "main"): LlmCapabilities {
    return this.adapter(role).capabilities;
  }

  /** Estimates the prompt tokens of `request` with the adapter serving `role`. */
  countTokens(request: LlmRequest, options: { readonly role?: ModelRole } = {}): number {
    return this.adapter(options.role).countTokens(request);
  }

  /**
   * Streams one model response through the `llm/stream` waterfall.
   *
   * @throws {TerretError} `LlmMissing` when the chain reaches the registry and no adapter serves the role
   */
  stream(request: LlmRequest, options: LlmRequestOptions = {}): AsyncIterable<StreamEvent> {
    const base = {
      role: options.role ?? "main",
      request,
      signal: options.signal ?? new AbortController().signal,
    };
    const payload: LlmStreamPayload = options.transport === undefined
      ? base
      : { ...base, transport: options.transport };
    return (options.ctx ?? this.ctx).waterfall(LlmStream, payload, (final) => {
      const adapter = this.adapter(final.role);
      return adapter.stream(
        final.request,
        final.transport === undefined
          ? { signal: final.signal }
          : { signal: final.signal, transport: final.transport },
      );
    });
  }
}

/** The `llm` service key (the registry of model adapters by role). */
export const Llm: ServiceKey<LlmRegistry> = LlmRegistry.key;
