/**
 * One turn of the default driver: plan §2.4's canonical flow with Terret's names, event for event. Internal to the
 * loop.
 *
 * ```
 * turn/start                              (or re-entering an open turn from the log)
 *   claim pending steers + one queued message
 *   -> agent/pre_step                     (waterfall: reject | enter(messages))
 *      step/start, user/message | context/injected for what entered
 *      offered tools, system prompt, history derived from the log
 *      agent/request -> assertInvariant -> llm/stream -> assistant/chunk* -> assistant/message
 *      tool/call* -> tools pipeline -> tool/result*   (under the tool barrier)
 *      step/end
 *      (tools owe a request, or waking input arrived) -> next step
 *   -> agent/turn_stopping                (serial)
 * turn/end
 * ```
 *
 * @module
 */
import type { Context } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { CORE_ERRORS } from "../errors.ts";
import type { TurnOutcome, TurnRun } from "../agents/driver.ts";
import { AGENT_SHUTDOWN } from "../agents/driver.ts";
import { Llm } from "../llm/llm_registry.ts";
import type { LlmRequest, StreamFailure, ToolCallPart, Usage } from "../llm/vocabulary.ts";
import { PromptKey } from "../prompt/prompt_assembler.ts";
import { WorkspaceKey } from "../seams/workspace.ts";
import type { SessionEvent } from "../sessions/envelope.ts";
import type { Content } from "../sessions/events.ts";
import type { Sessions } from "../sessions/sessions.ts";
import type { ToolResultPayload } from "../tools/tool.ts";
import { type ToolCallRequest, ToolsKey } from "../tools/tool_registry.ts";
import { Appender } from "./_appender.ts";
import { consumeStream } from "./_stream_step.ts";
import { Abandoned, runToolCalls } from "./_tool_barrier.ts";
import {
  AgentPreStep,
  AgentRequest,
  type AgentRequestPayload,
  AgentTurnStopping,
  type InputItem,
  type PreStepResult,
  type TurnStatus,
} from "./events.ts";
import { carriesMarker } from "./redaction.ts";
import type { LoopConfig } from "./loop.ts";

/** What a turn needs from the loop service. */
export interface TurnDeps {
  /** The loop service's context: services are resolved through the agent's fork, this is only for logging. */
  readonly ctx: Context;
  readonly sessions: Sessions;
  readonly config: LoopConfig;
}

/** A turn's failure, as `turn/end` records it. */
interface TurnError {
  readonly code: string;
  readonly message: string;
  readonly [extra: string]: unknown;
}

/** Where the step loop starts: after a fresh `turn/start`, or where an open turn was left. */
interface Reentry {
  /** The last step's tools owe a request. */
  readonly owed: boolean;
  /** No step has started yet (an empty entry then closes the turn as rejected). */
  readonly first: boolean;
  /** The next step re-sends an interrupted request and claims no new input. */
  readonly retry: boolean;
}

class Cancelled extends Error {}

class StreamFailed extends Error {
  readonly failure: StreamFailure;
  constructor(failure: StreamFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

const NO_USAGE: Usage = Object.freeze({ input_tokens: 0, output_tokens: 0 });

/** Runs one turn (or re-enters an open one) to its end. */
export function runTurn(deps: TurnDeps, run: TurnRun): Promise<TurnOutcome> {
  return new Turn(deps, run).run();
}

class Turn {
  readonly #deps: TurnDeps;
  readonly #run: TurnRun;
  readonly #agentCtx: Context;
  readonly #appender: Appender;
  readonly #ids: { readonly agent_id: string; readonly session_id: string };
  /** Steps of the turn so far (those before a resume included). */
  #steps = 0;
  /** Steps run by this call. */
  #ran = 0;
  /** The step opened by `step/start` and not yet closed by `step/end`. */
  #openStep: number | undefined;
  /** The usage to close the open step with when it fails. */
  #stepUsage: Usage = NO_USAGE;

  constructor(deps: TurnDeps, run: TurnRun) {
    this.#deps = deps;
    this.#run = run;
    this.#agentCtx = run.agent.ctx;
    this.#appender = new Appender(deps.sessions, run.agent.session_id);
    this.#ids = { agent_id: run.agent.id, session_id: run.agent.session_id };
  }

  async run(): Promise<TurnOutcome> {
    try {
      let state: Reentry;
      if (this.#run.resume !== undefined) {
        state = await this.#reenter(this.#run.resume.turn_start_seq);
      } else {
        this.#appender.append("turn/start", { agent_id: this.#ids.agent_id });
        state = { owed: false, first: true, retry: false };
      }
      return await this.#loop(state);
    } catch (error) {
      return await this.#failed(error);
    }
  }

  /** The step loop: one step per iteration until nothing is owed. */
  async #loop(start: Reentry): Promise<TurnOutcome> {
    let { owed, first, retry } = start;
    let extra: Content | undefined;
    const max = this.#deps.config.max_steps;
    for (;;) {
      this.#checkpoint();
      if (!first && !owed && extra === undefined && !this.#run.hasInput) {
        const decision = await this.#agentCtx.serial(AgentTurnStopping, {
          ...this.#ids,
          status: "completed",
          steps: this.#steps,
        });
        this.#checkpoint();
        if (decision?.continue !== undefined && this.#steps < max) {
          extra = decision.continue;
          continue;
        }
        return await this.#end("completed", undefined, false);
      }
      if (this.#steps >= max) {
        return await this.#end("failed", {
          code: "MaxSteps",
          message:
            `Cannot start step ${
              this.#steps + 1
            }: the turn reached max_steps (${max}) while the model still ` +
            "asked for tools or input waited (loop.max_steps)",
        });
      }
      const step = this.#steps + 1;
      // A retried step (its request was in flight when the turn was interrupted) answers what it had.
      const claimed = retry ? [] : this.#run.claim();
      retry = false;
      if (extra !== undefined) {
        claimed.push({ kind: "steer", content: extra });
        extra = undefined;
      }
      const pre = await this.#agentCtx.waterfall(
        AgentPreStep,
        { ...this.#ids, step, messages: claimed },
        (payload) => Promise.resolve({ enter: payload.messages }),
      );
      this.#abandonIfStopping();
      const entered = enteredItems(pre);
      if (entered === undefined) {
        return await this.#end("rejected", {
          code: "PreStepRejected",
          message: `Step ${step} was rejected by agent/pre_step: ${
            (pre as { reject: string }).reject
          }`,
        });
      }
      if (first && entered.length === 0) {
        return await this.#end("rejected", {
          code: "NothingToAnswer",
          message: "The turn's first step had no input to enter (no message, steer or context)",
        });
      }
      first = false;
      this.#steps = step;
      this.#ran++;
      this.#openStep = step;
      this.#stepUsage = NO_USAGE;
      this.#appender.append("step/start", { step });
      for (const item of entered) {
        this.#appender.append(
          item.kind === "message" ? "user/message" : "context/injected",
          item.queued_seq === undefined
            ? { content: item.content }
            : { content: item.content, queued_seq: item.queued_seq },
        );
      }
      owed = await this.#request(step);
    }
  }

  /** The request phase of a step and its tool calls; true when the tools owe another request. */
  async #request(step: number): Promise<boolean> {
    const ctx = this.#agentCtx;
    const signal = this.#run.signal;
    const { sessions, config } = this.#deps;
    const sessionId = this.#ids.session_id;
    await this.#appender.flush();
    this.#checkpoint();
    const llm = ctx.maybe(Llm);
    if (llm === undefined) {
      throw new TerretError(
        "LlmMissing",
        "Cannot send a model request: no model registry is mounted (row llm)",
      );
    }
    const tools = ctx.maybe(ToolsKey);
    const prompt = ctx.maybe(PromptKey);
    const capabilities = llm.capabilities(config.role);
    const offered = tools === undefined
      ? []
      : await tools.offered({ ctx, session_id: sessionId, signal });
    const system = prompt === undefined ? "" : await prompt.assemble(ctx, {
      ...this.#ids,
      capabilities,
      tools: offered.map((schema) => schema.name),
      workdirs: ctx.maybe(WorkspaceKey)?.dirs ?? [],
    }, { signal });
    const messages = await sessions.deriveMessages(sessionId, { signal });
    const request: LlmRequest = {
      ...(system === "" ? {} : { system }),
      messages,
      ...(offered.length === 0 ? {} : { tools: offered }),
    };
    const final = checkRequest(
      await ctx.waterfall(
        AgentRequest,
        { ...this.#ids, step, role: config.role, request },
        (payload) => Promise.resolve(payload),
      ),
    );
    await sessions.assertInvariant(final.request.messages, sessionId, { signal });
    this.#checkpoint();
    const streamed = await consumeStream(
      llm.stream(final.request, { role: final.role, signal, ctx }),
      this.#appender,
      sessions.scrubbing ? (text) => sessions.safePrefix(text) : undefined,
    );
    this.#abandonIfStopping();
    this.#stepUsage = streamed.usage;
    if (streamed.error !== undefined) {
      if (signal.aborted) throw new Cancelled();
      throw new StreamFailed(streamed.error);
    }
    if (streamed.parts.length > 0) {
      this.#appender.append("assistant/message", { parts: streamed.parts });
    }
    if (streamed.calls.length > 0) await this.#callTools(streamed.calls, false);
    this.#closeStep(streamed.finish, streamed.usage);
    return streamed.calls.length > 0;
  }

  async #callTools(calls: readonly ToolCallRequest[], resumed: boolean): Promise<void> {
    const markers = resumed
      ? [
        ...new Set([
          ...this.#deps.sessions.redactionMarkers(),
          ...this.#deps.config.redaction_markers,
        ]),
      ]
      : [];
    await runToolCalls({
      ctx: this.#agentCtx,
      tools: this.#agentCtx.maybe(ToolsKey),
      ...this.#ids,
      signal: this.#run.signal,
      appender: this.#appender,
      abandoned: () => this.#stopping,
      ...(resumed
        ? {
          refuse: (call: ToolCallRequest) => refuseRedacted(call, markers),
          callFields: { resumed: true },
        }
        : {}),
    }, calls);
  }

  /** Re-enters an open turn from the log; returns where the step loop picks up. */
  async #reenter(turnStartSeq: number): Promise<Reentry> {
    const events = await this.#deps.sessions.read(this.#ids.session_id, {
      from_seq: turnStartSeq,
      signal: this.#run.signal,
    });
    this.#abandonIfStopping();
    let last = -1;
    for (let i = 0; i < events.length; i++) {
      if (events[i]!.type === "step/start") {
        this.#steps++;
        last = i;
      }
    }
    if (last < 0) return { owed: false, first: true, retry: false };
    const tail = events.slice(last);
    const assistant = tail.findLast((event) => event.type === "assistant/message");
    const calls = assistant === undefined ? [] : toolCallsOf(assistant);
    if (tail.some((event) => event.type === "step/end")) {
      return { owed: calls.length > 0, first: false, retry: false };
    }
    this.#openStep = this.#steps;
    if (assistant === undefined) {
      // The request was in flight: close the step as interrupted (its chunks, if any, stay with it) and send
      // its request again in a step of its own, so each step's chunks still concatenate to its message.
      this.#closeStep("interrupted", NO_USAGE);
      return { owed: true, first: false, retry: true };
    }
    this.#ran++;
    const answered = new Set(
      tail.filter((event) => event.type === "tool/result").map((event) =>
        (event.payload as { id: string }).id
      ),
    );
    const owedCalls = calls.filter((call) => !answered.has(call.id));
    if (owedCalls.length > 0) await this.#callTools(owedCalls, true);
    this.#closeStep(calls.length > 0 ? "tool_calls" : "stop", NO_USAGE);
    return { owed: calls.length > 0, first: false, retry: false };
  }

  #closeStep(finish: string, usage: Usage): void {
    if (this.#openStep === undefined) return;
    this.#appender.append("step/end", { step: this.#openStep, usage, finish_reason: finish });
    this.#openStep = undefined;
  }

  get #stopping(): boolean {
    return this.#run.signal.aborted && CORE_ERRORS.is(this.#run.signal.reason, AGENT_SHUTDOWN);
  }

  #abandonIfStopping(): void {
    if (this.#stopping) throw new Abandoned();
  }

  #checkpoint(): void {
    this.#abandonIfStopping();
    if (this.#run.signal.aborted) throw new Cancelled();
  }

  async #failed(error: unknown): Promise<TurnOutcome> {
    if (error instanceof Abandoned || this.#stopping) {
      return { status: "cancelled", steps: this.#ran, closed: false };
    }
    if (error instanceof Cancelled) {
      const reason = this.#run.signal.reason;
      return await this.#end("cancelled", {
        code: "Cancelled",
        message: reason instanceof Error ? reason.message : String(reason),
      });
    }
    const info = errorInfo(error);
    if (!(error instanceof StreamFailed)) {
      this.#deps.ctx.logger.log("error", `A turn of agent "${this.#ids.agent_id}" failed`, {
        ...this.#ids,
        code: info.code,
        error,
      });
    }
    return await this.#end("failed", info);
  }

  /** Closes the turn: the open step, `agent/turn_stopping` (for other statuses than completed), `turn/end`. */
  async #end(status: TurnStatus, error?: TurnError, notify = true): Promise<TurnOutcome> {
    const outcome = (closed: boolean): TurnOutcome => ({
      status,
      steps: this.#ran,
      closed,
      ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
    });
    if (this.#stopping) return outcome(false);
    this.#closeStep(
      status === "cancelled" ? "cancelled" : status === "failed" ? "error" : "stop",
      this.#stepUsage,
    );
    if (notify) {
      try {
        await this.#agentCtx.serial(AgentTurnStopping, {
          ...this.#ids,
          status,
          steps: this.#steps,
        });
      } catch (failure) {
        this.#deps.ctx.logger.log("error", "An agent/turn_stopping listener failed", {
          ...this.#ids,
          error: failure,
        });
      }
    }
    this.#appender.append("turn/end", error === undefined ? { status } : { status, error });
    try {
      await this.#appender.flush();
    } catch (failure) {
      this.#deps.ctx.logger.log("error", `Cannot close a turn of agent "${this.#ids.agent_id}"`, {
        ...this.#ids,
        error: failure,
      });
      return outcome(false);
    }
    return outcome(true);
  }
}

function enteredItems(pre: PreStepResult | undefined): readonly InputItem[] | undefined {
  if (typeof pre === "object" && pre !== null && "reject" in pre) {
    if (typeof pre.reject !== "string") {
      throw new TypeError("An agent/pre_step listener returned {reject} without a string reason");
    }
    return undefined;
  }
  const enter = (pre as { enter?: unknown } | undefined)?.enter;
  if (
    !Array.isArray(enter) ||
    !enter.every((item) =>
      typeof item === "object" && item !== null &&
      (item.kind === "message" || item.kind === "steer") && "content" in item
    )
  ) {
    throw new TypeError(
      "An agent/pre_step listener returned neither {enter: [{kind, content}, …]} nor {reject: reason}",
    );
  }
  return enter as InputItem[];
}

function checkRequest(payload: AgentRequestPayload | undefined): AgentRequestPayload {
  if (
    typeof payload !== "object" || payload === null || typeof payload.request !== "object" ||
    payload.request === null || !Array.isArray(payload.request.messages) ||
    typeof payload.role !== "string"
  ) {
    throw new TypeError(
      "An agent/request listener returned something other than the payload with a request and a role",
    );
  }
  return payload;
}

function toolCallsOf(event: SessionEvent): ToolCallRequest[] {
  const parts = (event.payload as { parts: readonly { type: string }[] }).parts;
  return parts.filter((part): part is ToolCallPart => part.type === "tool_call").map((part) => {
    const argsError = (part as { args_error?: { message: string; raw?: string } }).args_error;
    return argsError === undefined
      ? { id: part.id, name: part.name, args: part.args }
      : { id: part.id, name: part.name, args: part.args, argsError };
  });
}

function refuseRedacted(
  call: ToolCallRequest,
  markers: readonly string[],
): ToolResultPayload | undefined {
  if (!carriesMarker(call.name, markers) && !carriesMarker(call.args, markers)) return undefined;
  return {
    id: call.id,
    name: call.name,
    content:
      `The call to "${call.name}" was not run again after the turn was interrupted: its logged name or ` +
      "arguments were redacted, so the original call cannot be reconstructed. Call the tool again if it is " +
      "still needed.",
    is_error: true,
  };
}

function errorInfo(error: unknown): TurnError {
  if (error instanceof StreamFailed) {
    const { kind, message, status, retryable } = error.failure;
    return {
      code: "StreamFailed",
      message,
      kind,
      ...(status === undefined ? {} : { status }),
      retryable,
    };
  }
  if (error instanceof TerretError) return { code: error.code, message: error.message };
  if (error instanceof Error) {
    return { code: error.name === "Error" ? "Error" : error.name, message: error.message };
  }
  return { code: "Error", message: String(error) };
}
