/**
 * The approvals service (plugin `terret-approvals`, row `approvals`): the gate the tool pipeline consults for
 * `policy` and `always` tools, permission rules, durable parking (`approval/requested` → `approval/resolved`),
 * deadlines, and unattended agents.
 *
 * @module
 */
import { EventLoopTurns, type HostPermissions, Service, type ServiceKey } from "@terret/hames";
import { CORE_ERRORS, TerretError } from "../errors.ts";
import type { z } from "zod";
import { AgentsKey } from "../agents/agents.ts";
import { AGENT_SHUTDOWN } from "../agents/driver.ts";
import { WorkspaceKey } from "../seams/workspace.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import { type ApprovalAnswerer, SessionEventAppended } from "../sessions/events.ts";
import { SessionProjection } from "../sessions/session_projection.ts";
import { type Sessions, SessionsKey } from "../sessions/sessions.ts";
import {
  ApprovalGateKey,
  type GateCall,
  type GateVerdict,
  type ReviewOptions,
} from "../tools/approval_gate.ts";
import { PatternSet } from "../tools/fnmatch.ts";
import { messageOf } from "../tools/tool.ts";
import {
  APPROVAL_STATE_TYPES,
  type ApprovalRequest,
  type ApprovalState,
  foldApprovalState,
  initialApprovalState,
  replayApprovalState,
} from "./approval_state.ts";
import { type ApprovalsConfig, approvalsConfig, durationMs } from "./approvals_config.ts";
import { type ApprovalClock, ApprovalClockKey, SYSTEM_CLOCK } from "./approval_clock.ts";
import { ApprovalTimers } from "./_approval_timers.ts";
import type { AnswerInput, Approvals, ApprovalStance, GateDecision } from "./approvals_api.ts";
import { decideByRules, RuleBook } from "./_rule_book.ts";
import { rememberRule } from "./remember_rule.ts";
import { deniedMessage } from "./_messages.ts";

/** The approvals service's key (`approvals`; the tool pipeline reads it as its {@linkcode ApprovalGate}). */
export const ApprovalsKey: ServiceKey<Approvals> = ApprovalGateKey as unknown as ServiceKey<
  Approvals
>;

type Waiter = (
  verdict: { decision: "allow" | "deny"; reason?: string; by?: ApprovalAnswerer },
) => void;

/**
 * The approvals service.
 *
 * @example
 * ```ts ignore
 * ctx.plugin(ApprovalsService, { allow: ["Bash(git status)"], deny: ["Bash(rm:*)"], deadline: "10m" });
 * ```
 */
export class ApprovalsService extends Service<ApprovalsConfig> implements Approvals {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-approvals";
  /** One line for the config catalog. */
  static readonly description =
    "Durable approvals (row approvals): the gate for policy and always tools, permission rules, parking " +
    "with deadlines, unattended agents.";
  /** The service key. */
  static readonly key: ServiceKey<Approvals> = ApprovalsKey;
  /** The log is where requests, verdicts and session rules live. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey];
  /** The config schema. */
  static readonly config: z.ZodType<ApprovalsConfig> = approvalsConfig;

  /** No host permission of its own: it reads and appends through the sessions service. */
  static permissions(): HostPermissions {
    return {};
  }

  #sessions!: Sessions;
  #projection!: SessionProjection<ApprovalState>;
  #rules = new RuleBook(approvalsConfig.parse({}));
  #unattended = new PatternSet([]);
  readonly #waiters = new Map<string, Set<Waiter>>();
  /** Requests answered or being answered in this process (bounded, oldest dropped): first answer wins. */
  readonly #claimed = new Set<string>();
  #timers!: ApprovalTimers;

  override async start(): Promise<void> {
    this.#sessions = this.ctx.get(SessionsKey);
    this.#apply(this.config);
    this.#projection = new SessionProjection(this.ctx, this.#sessions, {
      types: APPROVAL_STATE_TYPES,
      initial: initialApprovalState,
      fold: foldApprovalState,
      replay: replayApprovalState,
      maxSessions: this.config.cache_sessions,
      label: "approvals: session requests",
    });
    this.#timers = new ApprovalTimers(
      (sessionId, request) => this.#expire(sessionId, request),
      () => this.#clock(),
    );
    this.ctx.effect(() => () => this.#timers.clear(), "approvals: deadlines");
    this.ctx.on(SessionEventAppended, (event) => this.#appended(event));
    await this.#sweep();
  }

  override reconfigure(config: ApprovalsConfig): void {
    if (config.cache_sessions !== this.config.cache_sessions) {
      throw new TypeError("approvals.cache_sessions cannot change in place");
    }
    this.#apply(config);
  }

  #apply(config: ApprovalsConfig): void {
    this.#rules = new RuleBook(config);
    this.#unattended = new PatternSet(config.unattended);
  }

  /** How many sessions' approval states are cached (for tests and diagnostics). */
  get cachedSessions(): number {
    return this.#projection?.size ?? 0;
  }

  stance(): ApprovalStance {
    const { allow, ask, deny, always_can_be_ruled, deadline, on_timeout, unattended } = this.config;
    return { allow, ask, deny, always_can_be_ruled, deadline, on_timeout, unattended };
  }

  state(
    sessionId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<ApprovalState | undefined> {
    return this.#projection.get(sessionId, options);
  }

  async pending(
    sessionId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<ApprovalRequest[]> {
    const state = await this.#projection.get(sessionId, options);
    return state === undefined ? [] : state.open.map((id) => state.requests.get(id)!);
  }

  async decide(
    call: GateCall,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<GateDecision> {
    const state = await this.#projection.get(call.session_id, options);
    if (state === undefined) {
      return { kind: "deny", reason: `session "${call.session_id}" does not exist` };
    }
    const dirs = this.ctx.maybe(WorkspaceKey)?.dirs ?? [];
    return decideByRules(this.#rules, state, { ...call, dirs });
  }

  review(call: GateCall, options: ReviewOptions): Promise<GateVerdict> {
    // The common case, a cached session whose call a rule admits, is decided without a wait.
    const cached = this.#projection.peek(call.session_id);
    if (cached !== undefined && resumedRequest(cached, call) === undefined) {
      const decision = this.#byRules(cached, call);
      if (decision.kind === "allow") {
        return Promise.resolve({ allowed: true, bound: decision.bound });
      }
    }
    return this.#review(call, options.signal);
  }

  #byRules(state: ApprovalState, call: GateCall): GateDecision {
    const dirs = this.#rules.paths ? this.ctx.maybe(WorkspaceKey)?.dirs ?? [] : [];
    return decideByRules(this.#rules, state, { ...call, dirs });
  }

  async #review(call: GateCall, signal: AbortSignal): Promise<GateVerdict> {
    let state: ApprovalState | undefined;
    try {
      // A cached state resolves at once; only a miss (a log read) is worth an abortable wait.
      state = this.#projection.cached(call.session_id)
        ? await this.#projection.get(call.session_id)
        : await this.#projection.get(call.session_id, { signal });
    } catch (error) {
      signal.throwIfAborted();
      return denied(call, `its session's approvals could not be read (${messageOf(error)})`);
    }
    if (state === undefined) return denied(call, `session "${call.session_id}" does not exist`);
    const earlier = resumedRequest(state, call);
    if (earlier !== undefined) return await this.#park(call, earlier, signal);
    const decision = this.#byRules(state, call);
    if (decision.kind === "allow") return { allowed: true, bound: decision.bound };
    try {
      if (decision.kind === "deny") {
        await this.#requestAndResolve(call, decision.reason, { kind: "rule" }, decision.reason);
        return {
          allowed: false,
          message: deniedMessage(call.name, { kind: "rule" }, decision.reason),
        };
      }
      if (state.unattended || this.#unattended.test(call.agent_id)) {
        const reason =
          `agent "${call.agent_id}" is unattended (nobody can approve its calls) and ` +
          decision.reason;
        await this.#requestAndResolve(call, decision.reason, { kind: "unattended" }, reason);
        return {
          allowed: false,
          message: deniedMessage(call.name, { kind: "unattended" }, reason),
        };
      }
      const deadline = this.config.deadline === null
        ? undefined
        : durationMs(this.config.deadline)!;
      const request: ApprovalRequest = {
        request_id: crypto.randomUUID(),
        call: { id: call.id, name: call.name, args: call.args },
        reason: decision.reason,
        ...(deadline === undefined
          ? {}
          : { deadline_at: new Date(this.#clock().now() + deadline).toISOString() }),
        approval: call.approval,
        seq: 0,
      };
      const { seq: _seq, ...payload } = request;
      const appended = await this.#sessions.append(call.session_id, {
        type: "approval/requested",
        payload,
      });
      return await this.#park(call, { ...request, seq: appended.seq }, signal);
    } catch (error) {
      signal.throwIfAborted();
      return denied(call, `the approval could not be recorded (${messageOf(error)})`);
    }
  }

  async answer(sessionId: string, requestId: string, input: AnswerInput): Promise<SessionEvent> {
    if (input.decision !== "allow" && input.decision !== "deny") {
      throw new TerretError(
        "InvalidDecision",
        `Cannot answer approval request "${requestId}": decision must be "allow" or "deny", got ${
          JSON.stringify(input.decision)
        }`,
      );
    }
    const state = await this.#projection.get(
      sessionId,
      input.signal === undefined ? {} : { signal: input.signal },
    );
    const request = state?.requests.get(requestId);
    if (request === undefined) {
      throw new TerretError(
        "UnknownRequest",
        `Cannot answer approval request "${requestId}": session "${sessionId}" has no such request`,
      );
    }
    const rule = input.remember === true ? rememberRule(request.call) : undefined;
    const event = await this.#commit(sessionId, request, {
      decision: input.decision,
      by: input.by,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
      ...(rule === undefined ? {} : { rule }),
    });
    if (!this.#waiters.has(key(sessionId, requestId))) this.#wakeAgent(sessionId);
    return event;
  }

  /** Parks a call on its request until a verdict is recorded, the deadline passes, or `signal` aborts. */
  async #park(call: GateCall, request: ApprovalRequest, signal: AbortSignal): Promise<GateVerdict> {
    const k = key(call.session_id, request.request_id);
    signal.throwIfAborted();
    let waiter!: Waiter;
    const verdict = new Promise<Parameters<Waiter>[0]>((resolve) => waiter = resolve);
    const waiters = this.#waiters.get(k) ?? new Set();
    waiters.add(waiter);
    this.#waiters.set(k, waiters);
    const onAbort = (): void => {
      if (!CORE_ERRORS.is(signal.reason, AGENT_SHUTDOWN)) {
        this.#commit(call.session_id, request, {
          decision: "deny",
          by: { kind: "client" },
          reason: "the turn was cancelled while the call waited for approval",
        }).catch(() => {});
      }
    };
    try {
      const recorded = (await this.#projection.get(call.session_id, { signal }))?.requests.get(
        request.request_id,
      )?.verdict;
      if (recorded !== undefined) return verdictOf(call, recorded);
      this.#timers.arm(call.session_id, request);
      this.#setWaiting(call, true);
      signal.addEventListener("abort", onAbort, { once: true });
      const answer = await abortable(verdict, signal);
      return verdictOf(call, answer);
    } finally {
      signal.removeEventListener("abort", onAbort);
      waiters.delete(waiter);
      if (waiters.size === 0) this.#waiters.delete(k);
      this.#setWaiting(call, false);
    }
  }

  /** Records a verdict: first answer wins, checked synchronously against answers in flight and the log. */
  #commit(
    sessionId: string,
    request: ApprovalRequest,
    payload: { decision: "allow" | "deny"; by: ApprovalAnswerer; reason?: string; rule?: string },
  ): Promise<SessionEvent> {
    const k = key(sessionId, request.request_id);
    if (this.#claimed.has(k) || request.verdict !== undefined) {
      return Promise.reject(alreadyResolved(request));
    }
    this.#claim(k);
    const appended = this.#sessions.append(sessionId, {
      type: "approval/resolved",
      payload: { request_id: request.request_id, ...payload },
    });
    appended.catch(() => this.#claimed.delete(k));
    return appended;
  }

  async #requestAndResolve(
    call: GateCall,
    reason: string,
    by: ApprovalAnswerer,
    verdictReason: string,
  ): Promise<void> {
    const request_id = crypto.randomUUID();
    const requested = this.#sessions.append(call.session_id, {
      type: "approval/requested",
      payload: {
        request_id,
        call: { id: call.id, name: call.name, args: call.args },
        reason,
        approval: call.approval,
      },
    });
    const resolved = this.#sessions.append(call.session_id, {
      type: "approval/resolved",
      payload: { request_id, decision: "deny", by, reason: verdictReason },
    });
    await Promise.all([requested, resolved]);
  }

  #appended(event: SessionEvent): void {
    if (event.type !== "approval/resolved") return;
    const payload = event.payload as Parameters<Waiter>[0] & { request_id: string };
    const k = key(event.session_id, payload.request_id);
    this.#claim(k);
    this.#timers.disarm(event.session_id, payload.request_id);
    for (const waiter of this.#waiters.get(k) ?? []) waiter(payload);
  }

  #claim(k: string): void {
    this.#claimed.add(k);
    if (this.#claimed.size > MAX_CLAIMS) this.#claimed.delete(this.#claimed.values().next().value!);
  }

  #expire(sessionId: string, request: ApprovalRequest): void {
    const allow = this.config.on_timeout === "allow_policy" && request.approval === "policy";
    this.#commit(sessionId, request, {
      decision: allow ? "allow" : "deny",
      by: { kind: "timeout" },
      reason: "nobody answered before the deadline",
    }).then(() => {
      if (!this.#waiters.has(key(sessionId, request.request_id))) this.#wakeAgent(sessionId);
    }, (error) => {
      if (!CORE_ERRORS.is(error, "AlreadyResolved")) {
        this.ctx.logger.log("error", `Cannot expire approval request "${request.request_id}"`, {
          session_id: sessionId,
          error,
        });
      }
    });
  }

  /**
   * On boot: every open request with a deadline is armed (one whose deadline passed expires at once), and the agent
   * of a session holding a call answered but not yet run (the process died in between) is woken, so the call runs
   * (or is refused) from the verdict in the log without being asked again.
   */
  async #sweep(): Promise<void> {
    const answered: string[] = [];
    const turns = new EventLoopTurns();
    // The store names the sessions holding a request (or, when it cannot tell, every session): each is read below.
    const candidates = await this.#sessions.list({ types: REQUEST_TYPES });
    for (const [index, sessionId] of candidates.entries()) {
      // The event loop gets a turn between sessions: a store's reads may settle without one (SQLite's do).
      if (index > 0) await turns.turn();
      // Only a session with a request can have one open or a verdict owed. Its approval events are sparse (the
      // stores index them), while the state folds every tool call: most sessions cost one indexed read here.
      const requests = await this.#sessions.read(sessionId, { types: REQUEST_TYPES, limit: 1 });
      if (requests.length === 0) continue;
      const state = await this.#projection.get(sessionId);
      if (state === undefined) continue;
      let open = false;
      for (const id of state.open) {
        open = true;
        const request = state.requests.get(id)!;
        if (request.deadline_at !== undefined) this.#timers.arm(sessionId, request);
      }
      const owed = [...state.byCall.values()].some((id) =>
        state.requests.get(id)?.verdict !== undefined
      );
      if (owed && state.agent_id !== undefined) answered.push(state.agent_id);
      // A session with nothing open or owed is read again when next used: the sweep leaves no cache behind.
      if (!open && !owed) this.#projection.invalidate(sessionId);
    }
    if (answered.length === 0) return;
    const stopped = Promise.withResolvers<"stopped">();
    const resuming = (async () => {
      // The loader mounts every row before any start resolves, and `idle` re-checks until no row has a start in
      // flight (this one included): past it every row has started, so the tools rows register are registered. A
      // stop before then (its own transition would keep the tree from going idle) resumes nothing.
      if (await Promise.race([this.ctx.idle(), stopped.promise]) === "stopped") return;
      const agents = this.ctx.maybe(AgentsKey);
      for (const agentId of answered) {
        try {
          (await agents?.ensure(agentId))?.wake();
        } catch (error) {
          this.ctx.logger.log("error", `Cannot resume agent "${agentId}" after an approval`, {
            error,
          });
        }
      }
    })();
    this.ctx.effect(() => () => {
      stopped.resolve("stopped");
      return resuming;
    }, "approvals: resume answered calls");
  }

  #clock(): ApprovalClock {
    return this.ctx.maybe(ApprovalClockKey) ?? SYSTEM_CLOCK;
  }

  #setWaiting(call: GateCall, waiting: boolean): void {
    const agent = this.ctx.maybe(AgentsKey)?.get(call.agent_id);
    if (agent === undefined || agent.session_id !== call.session_id) return;
    try {
      agent.setWaitingApproval(waiting);
    } catch {
      // The turn is already over (cancelled or stopping): its status is the agents service's to report.
    }
  }

  #wakeAgent(sessionId: string): void {
    const agent = this.ctx.maybe(AgentsKey)?.agentForSession(sessionId);
    try {
      agent?.wake();
    } catch {
      // Disposed meanwhile: its open turn is re-entered by the next agent on this session.
    }
  }
}

const MAX_CLAIMS = 10_000;
/** The events a session has only once it has asked: the boot sweep skips a session without them. */
const REQUEST_TYPES: readonly string[] = ["approval/requested", "approval/resolved"];

function key(sessionId: string, requestId: string): string {
  return `${sessionId}\u0000${requestId}`;
}

function resumedRequest(state: ApprovalState, call: GateCall): ApprovalRequest | undefined {
  const id = state.byCall.get(call.id);
  const request = id === undefined ? undefined : state.requests.get(id);
  if (request === undefined || request.call.name !== call.name) return undefined;
  return JSON.stringify(request.call.args) === JSON.stringify(call.args) ? request : undefined;
}

function verdictOf(call: GateCall, verdict: Parameters<Waiter>[0]): GateVerdict {
  if (verdict.decision === "allow") return { allowed: true, bound: true };
  return { allowed: false, message: deniedMessage(call.name, verdict.by, verdict.reason) };
}

function denied(call: GateCall, why: string): GateVerdict {
  return {
    allowed: false,
    message: `Cannot run tool "${call.name}": ${why}, so the call is denied`,
  };
}

function alreadyResolved(request: ApprovalRequest): TerretError {
  return new TerretError(
    "AlreadyResolved",
    `Cannot answer approval request "${request.request_id}": it is already resolved${
      request.verdict === undefined ? "" : ` (${request.verdict.decision})`
    }`,
  );
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then((value) => {
      signal.removeEventListener("abort", abort);
      resolve(value);
    });
  });
}
