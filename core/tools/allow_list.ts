/**
 * The allow list: the deny-by-default policy the tool registry consults, as an authoritative gate, on the exact
 * call the `tools/pre_execute` waterfall admitted.
 *
 * @module
 */
import {
  type Context,
  defineService,
  type Disposer,
  type HostPermissions,
  Service,
  type ServiceKey,
} from "@terret/hames";
import { z } from "zod";
import type { SessionEvent } from "../sessions/envelope.ts";
import { SessionProjection } from "../sessions/session_projection.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import { ToolsPreExecute } from "./events.ts";
import { PatternSet } from "./fnmatch.ts";
import { messageOf } from "./tool.ts";

/** Why a call was refused. */
export type DenialReason = "floor" | "session" | "unknown_session" | "no_policy" | "error";

/** The gate's answer for one call. */
export type PolicyVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly reason: DenialReason; readonly message: string };

/** Options for {@linkcode ToolPolicy.check}. */
export interface PolicyCheckOptions {
  /** The session the call belongs to. */
  readonly session_id: string;
  readonly signal?: AbortSignal;
}

/**
 * The tool policy (service key `tool_policy`, provided by the `tools.allow` row).
 *
 * Contract: deny by default. A name is allowed when it matches a floor pattern and, when the session's log holds a
 * `policy/updated`, a pattern of the last one (a session policy only narrows; it can never admit what the floor
 * does not) and a pattern of the last one marked `ceiling: true`, if any (a bound set when the session was made,
 * such as a subagent's share of its parent's tools, that no later `policy/updated` can widen). Patterns are case-sensitive `fnmatch` globs. A session the log does not hold is denied. `check`
 * rejects only when `signal` aborts; a log read failure is a denial (`reason: "error"`).
 */
export interface ToolPolicy {
  /** The floor's patterns (the row's `allow`). */
  readonly floor: readonly string[];
  /** Decides one call. */
  check(name: string, options: PolicyCheckOptions): Promise<PolicyVerdict>;
  /**
   * Optional: every name's `check(name, options).allowed` at once, as a synchronous predicate (the registry offers
   * the model the tools it admits each step).
   *
   * Contract: the predicate answers for each name exactly what `check` would at the time of the call, and keeps
   * answering so: a policy returns a new predicate whenever an answer may change (a new floor, a session's new
   * `policy/updated`), so callers may cache what they derive from one, keyed on its identity. It rejects only when
   * `signal` aborts; a log read failure denies every name.
   */
  admits?(options: PolicyCheckOptions): Promise<(name: string) => boolean>;
  /**
   * The session's active patterns: the last `policy/updated`'s `allow`, `null` when it has none (the floor alone
   * governs), `undefined` when the log does not hold the session.
   */
  sessionPolicy(
    sessionId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<readonly string[] | null | undefined>;
}

/** The tool policy's service key. */
export const ToolPolicyKey: ServiceKey<ToolPolicy> = defineService<ToolPolicy>(
  "tool_policy",
  "The allow list the tool registry consults on every admitted call (row tools.allow)",
);

/** The `tools.allow` row's config. */
export interface AllowListConfig {
  /** The floor: case-sensitive fnmatch globs naming the tools any session may call. */
  readonly allow: readonly string[];
  /** The most sessions whose active policy is cached at once. */
  readonly cache_sessions: number;
}

/** The `tools.allow` row's config schema. */
export const allowListConfig: z.ZodType<AllowListConfig> = z.strictObject({
  allow: z.array(z.string().min(1)).describe(
    "The floor: case-sensitive fnmatch globs (*, ?, [...]) over tool names (Read, mcp__nexus__*); a tool no " +
      "pattern names is denied, and a session's policy/updated can only narrow this list",
  ),
  cache_sessions: z.number().int().min(1).default(10_000).describe(
    "Sessions whose active policy (the last policy/updated) is cached at once; older entries are re-read " +
      "from the log",
  ),
}) as z.ZodType<AllowListConfig>;

/** The denial message for a tool no pattern of the floor names. */
export function floorDenial(name: string): string {
  return `Cannot run tool "${name}": it is not on the allow list (denied by policy). Do not call it again; ` +
    "use a tool you are allowed to use or continue without it.";
}

/** The denial message for a tool the session's policy does not name. */
export function sessionDenial(name: string): string {
  return `Cannot run tool "${name}": this session's policy does not allow it (denied by policy). Do not call ` +
    "it again; use a tool you are allowed to use or continue without it.";
}

/** The denial message for a tool an agent's narrowing ({@linkcode narrowTools}) does not name. */
export function agentDenial(name: string): string {
  return `Cannot run tool "${name}": this agent is not allowed to use it (denied by policy). Do not call ` +
    "it again; use a tool you are allowed to use or continue without it.";
}

/** The denial message when no allow list is mounted. */
export function noPolicyDenial(name: string): string {
  return `Cannot run tool "${name}": no allow list is configured (config row tools.allow), so every tool ` +
    "is denied";
}

/**
 * A session's active policy: the last `policy/updated`'s patterns, bounded by the last one marked `ceiling: true`
 * (the same set when that one is the last).
 */
class SessionPolicySet {
  constructor(readonly active: PatternSet, readonly ceiling: PatternSet | undefined) {}

  /** The last `policy/updated`'s patterns. */
  get patterns(): readonly string[] {
    return this.active.patterns;
  }

  /** True when both the last policy and the ceiling admit `name`. */
  test(name: string): boolean {
    return this.active.test(name) && (this.ceiling === undefined || this.ceiling.test(name));
  }
}

type Active = SessionPolicySet | null;

/** The predicate that admits nothing (an unknown session, an unreadable policy). */
const ADMIT_NONE = (_name: string): boolean => false;

/**
 * The deny-by-default allow list (plugin `terret-tools-allow`, row `tools.allow`): the floor from config, each
 * session's active set from the last `policy/updated` in its log (cached per session, updated log-first), and
 * the effective rule floor ∧ session. Reconfiguring swaps the floor in place and keeps the session cache.
 *
 * @example
 * ```ts
 * import { createContext } from "@terret/hames";
 * import {
 *   memoryStorePlugin,
 *   sessionsPlugin,
 *   SessionsKey,
 *   ToolAllowList,
 *   ToolPolicyKey,
 * } from "@terret/core";
 * await using ctx = createContext({ mode: "test" });
 * ctx.plugin(memoryStorePlugin, {});
 * ctx.plugin(sessionsPlugin, {});
 * ctx.plugin(ToolAllowList, { allow: ["Read", "mcp__nexus__*"] });
 * await ctx.idle();
 * await ctx.get(SessionsKey).create({ session_id: "s1" });
 * console.log(await ctx.get(ToolPolicyKey).check("Bash", { session_id: "s1" })); // { allowed: false, … }
 * ```
 */
export class ToolAllowList extends Service<AllowListConfig> implements ToolPolicy {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-tools-allow";
  /** One line for the config catalog. */
  static readonly description =
    "The deny-by-default tool allow list (row tools.allow): the floor, narrowed per session by the last " +
    "policy/updated in its log.";
  /** The service key. */
  static readonly key: ServiceKey<ToolPolicy> = ToolPolicyKey;
  /** The log is where session policies live. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey];
  /** The config schema. */
  static readonly config: z.ZodType<AllowListConfig> = allowListConfig;

  /** No host permission of its own: it reads the log through the sessions service. */
  static permissions(): HostPermissions {
    return {};
  }

  #floor: PatternSet = new PatternSet([]);
  #projection: SessionProjection<Active> | undefined;
  /** The predicate of each active session set (`null`: the floor alone), valid while its floor is the current one. */
  readonly #admits = new WeakMap<
    SessionPolicySet | PatternSet,
    { readonly floor: PatternSet; readonly admit: (name: string) => boolean }
  >();

  /** The floor's patterns. */
  get floor(): readonly string[] {
    return this.#floor.patterns;
  }

  override start(): void {
    this.#floor = new PatternSet(this.config.allow);
    this.#projection = createPolicyProjection(this.ctx.get(SessionsKey), this, this.config);
  }

  override async reconfigure(config: AllowListConfig): Promise<void> {
    if (config.cache_sessions !== this.config.cache_sessions) {
      const previous = this.#projection;
      this.#projection = createPolicyProjection(this.ctx.get(SessionsKey), this, config);
      await previous?.dispose();
    }
    this.#floor = new PatternSet(config.allow);
  }

  async check(name: string, options: PolicyCheckOptions): Promise<PolicyVerdict> {
    if (!this.#floor.test(name)) {
      return { allowed: false, reason: "floor", message: floorDenial(name) };
    }
    let active: Active | undefined;
    try {
      active = await this.#projection!.get(options.session_id, signalOf(options));
    } catch (error) {
      options.signal?.throwIfAborted();
      return {
        allowed: false,
        reason: "error",
        message: `Cannot run tool "${name}": the session's policy could not be read (${
          messageOf(error)
        }), so the call is denied`,
      };
    }
    if (active === undefined) {
      return {
        allowed: false,
        reason: "unknown_session",
        message:
          `Cannot run tool "${name}": session "${options.session_id}" does not exist, so no ` +
          "policy admits the call",
      };
    }
    if (active !== null && !active.test(name)) {
      return { allowed: false, reason: "session", message: sessionDenial(name) };
    }
    return { allowed: true };
  }

  async admits(options: PolicyCheckOptions): Promise<(name: string) => boolean> {
    let active: Active | undefined;
    try {
      active = await this.#projection!.get(options.session_id, signalOf(options));
    } catch {
      options.signal?.throwIfAborted();
      return ADMIT_NONE;
    }
    if (active === undefined) return ADMIT_NONE;
    const floor = this.#floor;
    const key = active ?? floor;
    const known = this.#admits.get(key);
    if (known !== undefined && known.floor === floor) return known.admit;
    const admit = active === null
      ? (name: string): boolean => floor.test(name)
      : (name: string): boolean => floor.test(name) && active.test(name);
    this.#admits.set(key, { floor, admit });
    return admit;
  }

  async sessionPolicy(
    sessionId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<readonly string[] | null | undefined> {
    const active = await this.#projection!.get(sessionId, signalOf(options));
    return active === undefined ? undefined : active === null ? null : active.patterns;
  }

  /** How many sessions' policies are cached (for tests and diagnostics). */
  get cachedSessions(): number {
    return this.#projection?.size ?? 0;
  }

  /** True when the session's active policy is cached. */
  isCached(sessionId: string): boolean {
    return this.#projection?.cached(sessionId) ?? false;
  }
}

function createPolicyProjection(
  sessions: Sessions,
  owner: ToolAllowList,
  config: AllowListConfig,
): SessionProjection<Active> {
  return new SessionProjection<Active>(owner.ctx, sessions, {
    types: ["policy/updated"],
    initial: () => null,
    fold: (state, event: SessionEvent) => {
      const payload = event.payload as { allow: readonly string[]; ceiling?: unknown };
      const active = new PatternSet(payload.allow);
      return new SessionPolicySet(active, payload.ceiling === true ? active : state?.ceiling);
    },
    maxSessions: config.cache_sessions,
    label: "tools.allow: session policies",
  });
}

function signalOf(options: { readonly signal?: AbortSignal }): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal };
}

/**
 * Narrows the tools one context's subtree may run (an agent's fork): a `tools/pre_execute` listener on `ctx` that
 * turns every call the rest of the chain admits under a name no pattern matches into a denial. It can only narrow:
 * the registry's gate (floor ∧ session policy) still decides every call it lets through. Being a listener, it
 * governs only calls dispatched from `ctx`'s subtree, and does not filter `tools.offered`.
 *
 * @param ctx the context to narrow (the listener is an effect of it)
 * @param patterns case-sensitive fnmatch globs
 * @returns the listener's disposer
 *
 * @example
 * ```ts ignore
 * narrowTools(agent.ctx, ["Read", "Grep"]); // this agent may use at most Read and Grep
 * ```
 */
export function narrowTools(ctx: Context, patterns: readonly string[]): Disposer {
  const allowed = new PatternSet(patterns);
  return ctx.on(ToolsPreExecute, async (_call, next) => {
    const outcome = await next();
    if ("admit" in outcome && !allowed.test(outcome.admit.name)) {
      return { result: { content: agentDenial(outcome.admit.name), is_error: true } };
    }
    return outcome;
  });
}
