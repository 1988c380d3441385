/**
 * The guarded pipeline one tool call runs through: `tools/pre_execute` → the allow-list gate on the exact admitted
 * call → argument validation → the approval gate (tools whose approval is not `never`; denied when no approvals row
 * is mounted) → `tools/execute` around the handler → `tools/post_execute` → the output cap.
 * Every failure becomes an `is_error` result addressed to the model. Internal to the registry.
 *
 * Cancellation: an aborted signal resolves the call as cancelled at once, and the pipeline checks the signal at
 * every await boundary before the handler, so a cancelled call never reaches `tools/execute` or the handler.
 *
 * @module
 */
import type { Context, Logger } from "@terret/hames";
import type { ToolPolicy } from "./allow_list.ts";
import { noPolicyDenial } from "./allow_list.ts";
import { type ApprovalGate, noApprovalsDenial } from "./approval_gate.ts";
import {
  type PreExecuteResult,
  type ToolExecution,
  type ToolInvocation,
  ToolsExecute,
  ToolsPostExecute,
  ToolsPreExecute,
} from "./events.ts";
import { capContent } from "./output_cap.ts";
import {
  type CompiledTool,
  messageOf,
  type ToolOutcome,
  type ToolResultPayload,
  type ToolRun,
} from "./tool.ts";
import {
  cancelled,
  checkOutcome,
  failure,
  invalidArguments,
  isPlainObject,
  toOutcome,
  wellFormed,
} from "./_outcome.ts";
import type { ExecuteOptions, ToolCallRequest } from "./tool_registry.ts";

/** What the pipeline needs from its registry. */
export interface PipelineHost {
  /** The tool of that name visible from `ctx`. */
  lookup(ctx: Context, name: string): CompiledTool | undefined;
  /** The authoritative policy, resolved from the registry's own context (a fork cannot shadow it). */
  policy(): ToolPolicy | undefined;
  /** The approval gate, resolved from the registry's own context (a fork cannot shadow it). */
  gate(): ApprovalGate | undefined;
  readonly maxOutputBytes: number;
  readonly logger: Logger;
}

/** Runs one call; never rejects. */
export async function runPipeline(
  host: PipelineHost,
  call: ToolCallRequest,
  options: ExecuteOptions,
): Promise<ToolResultPayload> {
  const signal = options.signal ?? new AbortController().signal;
  let outcome: ToolOutcome;
  if (signal.aborted) outcome = cancelled(call.name, signal, false);
  else if (call.argsError !== undefined) {
    outcome = failure(
      `Invalid arguments for tool "${call.name}": they are not valid JSON (${call.argsError.message}). ` +
        "Call the tool again with a JSON object matching its schema.",
    );
  } else if (!isPlainObject(call.args)) {
    outcome = failure(
      `Invalid arguments for tool "${call.name}": expected a JSON object, got ${
        describe(call.args)
      }. ` +
        "Call the tool again with a JSON object matching its schema.",
    );
  } else {
    const invocation: ToolInvocation = {
      id: call.id,
      name: call.name,
      args: call.args,
      session_id: options.session_id,
      agent_id: options.agent_id,
    };
    const progress: Progress = { executing: false };
    outcome = await untilAborted(
      guarded(host, invocation, options.ctx, signal, progress),
      signal,
      () => cancelled(call.name, signal, progress.executing),
    );
  }
  return {
    id: call.id,
    name: call.name,
    content: wellFormed(capContent(outcome.content, host.maxOutputBytes)),
    is_error: outcome.is_error,
    ...(outcome.details === undefined ? {} : { details: outcome.details }),
  };
}

/** How far a call got: whether it reached `tools/execute` (and so may have had effects). */
interface Progress {
  executing: boolean;
}

async function guarded(
  host: PipelineHost,
  invocation: ToolInvocation,
  ctx: Context,
  signal: AbortSignal,
  progress: Progress,
): Promise<ToolOutcome> {
  let outcome: ToolOutcome;
  try {
    outcome = await admitAndRun(host, invocation, ctx, signal, progress);
  } catch (error) {
    outcome = listenerFailure(host, invocation, "preparing or running it", error);
  }
  try {
    const done = await ctx.waterfall(
      ToolsPostExecute,
      { ...invocation, content: outcome.content, is_error: outcome.is_error },
      (completion) =>
        Promise.resolve({ content: completion.content, is_error: completion.is_error }),
    );
    const final = checkOutcome(done, "tools/post_execute");
    // `details` never passes the model-facing waterfall: the handler's stand, whatever a listener rewrote.
    return outcome.details === undefined ? final : { ...final, details: outcome.details };
  } catch (error) {
    return listenerFailure(host, invocation, "finishing it", error);
  }
}

async function admitAndRun(
  host: PipelineHost,
  invocation: ToolInvocation,
  ctx: Context,
  signal: AbortSignal,
  progress: Progress,
): Promise<ToolOutcome> {
  // Every await below may outlive a cancel: each one is followed by a check, so nothing runs after it.
  const notStarted = (): ToolOutcome => cancelled(invocation.name, signal, false);
  const pre = await ctx.waterfall(
    ToolsPreExecute,
    invocation,
    (admitted) => Promise.resolve({ admit: admitted }),
  );
  if (signal.aborted) return notStarted();
  if (isVeto(pre)) return checkOutcome(pre.result, "tools/pre_execute");
  const admitted = admittedCall(pre);
  const tool = host.lookup(ctx, admitted.name);
  if (tool === undefined) {
    return failure(
      `Unknown tool "${admitted.name}": no tool of this name is available. Call one of the tools you were ` +
        "offered, by its exact name.",
    );
  }
  const policy = host.policy();
  const verdict = policy === undefined
    ? { allowed: false as const, message: noPolicyDenial(admitted.name) }
    : await policy.check(admitted.name, { session_id: invocation.session_id, signal });
  if (signal.aborted) return notStarted();
  if (!verdict.allowed) return failure(verdict.message);
  const checked = await tool.validate(admitted.args);
  if (signal.aborted) return notStarted();
  if (!checked.ok) return failure(invalidArguments(admitted.name, checked.issues));
  const approval = tool.info.approval;
  let bound = false;
  if (approval !== "never") {
    const gate = host.gate();
    if (gate === undefined) return failure(noApprovalsDenial(admitted.name, approval));
    let reviewed;
    try {
      reviewed = await gate.review({
        id: invocation.id,
        name: admitted.name,
        args: checked.value,
        approval,
        session_id: invocation.session_id,
        agent_id: invocation.agent_id,
      }, { ctx, signal });
    } catch (error) {
      if (signal.aborted) return cancelled(admitted.name, signal, true);
      throw error;
    }
    if (!reviewed.allowed) return failure(reviewed.message);
    bound = reviewed.bound === true;
    // A call cancelled while it waited for a verdict never reaches tools/execute.
    if (signal.aborted) return cancelled(admitted.name, signal, true);
  }
  const execution: ToolExecution = {
    ...invocation,
    name: admitted.name,
    args: checked.value,
    tool: tool.info,
    signal,
    ctx,
  };
  const run: ToolRun = Object.freeze({
    signal,
    session_id: invocation.session_id,
    agent_id: invocation.agent_id,
    call_id: invocation.id,
    ctx,
  });
  progress.executing = true;
  const done = await ctx.waterfall(
    ToolsExecute,
    execution,
    (final) => {
      if (
        bound && final.args !== checked.value && !sameJson(final.args, checked.value)
      ) {
        return Promise.resolve(failure(
          `Cannot run tool "${admitted.name}": a tools/execute listener changed the arguments after they ` +
            "were approved, so the call is denied",
        ));
      }
      return callHandler(tool, final.args === checked.value ? checked : undefined, final, run);
    },
  );
  return checkOutcome(done, "tools/execute");
}

/** The exact admitted call: its name and arguments as the chain returned them; the id and session stay. */
function admittedCall(
  pre: unknown,
): { readonly name: string; readonly args: Record<string, unknown> } {
  const admit = (pre as { admit?: unknown } | undefined)?.admit as
    | { name?: unknown; args?: unknown }
    | undefined;
  if (typeof admit?.name !== "string" || !isPlainObject(admit.args)) {
    throw new TypeError(
      "a tools/pre_execute listener returned neither {admit: call} with a name and an arguments object " +
        "nor {result}",
    );
  }
  return { name: admit.name, args: admit.args };
}

async function callHandler(
  tool: CompiledTool,
  validated: { readonly value: Record<string, unknown> } | undefined,
  execution: ToolExecution,
  run: ToolRun,
): Promise<ToolOutcome> {
  let args = validated?.value;
  if (args === undefined) {
    const checked = isPlainObject(execution.args)
      ? await tool.validate(execution.args)
      : { ok: false as const, issues: [{ path: [], message: "expected an object" }] };
    if (!checked.ok) return failure(invalidArguments(tool.info.name, checked.issues));
    args = checked.value;
  }
  // A tools/execute listener may have awaited before calling on: the handler starts only on a live signal.
  if (run.signal.aborted) return cancelled(tool.info.name, run.signal, false);
  try {
    return toOutcome(tool.info.name, await tool.handler(args, run));
  } catch (error) {
    if (run.signal.aborted) return cancelled(tool.info.name, run.signal, true);
    return failure(`Tool "${tool.info.name}" failed: ${messageOf(error)}`);
  }
}

function isVeto(pre: PreExecuteResult | undefined): pre is { readonly result: ToolOutcome } {
  return isPlainObject(pre) && "result" in pre && !("admit" in pre);
}

function listenerFailure(
  host: PipelineHost,
  invocation: ToolInvocation,
  doing: string,
  error: unknown,
): ToolOutcome {
  host.logger.log(
    "error",
    `Tool call "${invocation.id}" (${invocation.name}) failed while ${doing}`,
    {
      session_id: invocation.session_id,
      agent_id: invocation.agent_id,
      error,
    },
  );
  return failure(
    `Tool "${invocation.name}" could not run: the harness failed while ${doing} (${
      messageOf(error)
    })`,
  );
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onAbort: () => T): Promise<T> {
  return new Promise<T>((resolve) => {
    const abort = (): void => resolve(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    work.then((value) => {
      signal.removeEventListener("abort", abort);
      resolve(value);
    });
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "a non-plain object" : `a ${typeof value}`;
}
