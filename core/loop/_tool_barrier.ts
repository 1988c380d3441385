/**
 * The tool barrier: a step's calls chunked into maximal runs of adjacent `parallel` tools (run together) and
 * `serial` tools (a barrier of one each), each run bracketed by its durable `tool/call`s and `tool/result`s, results
 * always in call order. Internal to the loop.
 *
 * @module
 */
import type { Context } from "@terret/hames";
import type { ToolResultPayload } from "../tools/tool.ts";
import type { ToolCallRequest, Tools } from "../tools/tool_registry.ts";
import type { Appender } from "./_appender.ts";

/** What the barrier needs for one step. */
export interface BarrierHost {
  readonly ctx: Context;
  readonly tools: Tools | undefined;
  readonly session_id: string;
  readonly agent_id: string;
  readonly signal: AbortSignal;
  readonly appender: Appender;
  /** True when the turn is being abandoned (shutdown): nothing more may be appended. */
  abandoned(): boolean;
  /** A call that must not run (resume found it redacted), with the result to log instead. */
  refuse?(call: ToolCallRequest): ToolResultPayload | undefined;
  /** Extra `tool/call` payload fields (`resumed: true` when re-executing after a restart). */
  readonly callFields?: Readonly<Record<string, unknown>>;
}

/** Thrown (internally) when a shutdown interrupted the barrier: the turn is left open. */
export class Abandoned extends Error {
  constructor() {
    super("The turn was abandoned (the agents service is stopping)");
    this.name = "Abandoned";
  }
}

/**
 * Chunks calls into barrier runs: maximal runs of adjacent calls whose tool is `parallel`, and single `serial`
 * calls (an unknown tool counts as `serial`).
 */
function barrierRuns(
  calls: readonly ToolCallRequest[],
  concurrency: (name: string) => "parallel" | "serial",
): ToolCallRequest[][] {
  const runs: ToolCallRequest[][] = [];
  let parallel: ToolCallRequest[] | undefined;
  for (const call of calls) {
    if (concurrency(call.name) === "parallel") {
      if (parallel === undefined) runs.push(parallel = []);
      parallel.push(call);
    } else {
      parallel = undefined;
      runs.push([call]);
    }
  }
  return runs;
}

/**
 * Runs a step's calls under the barrier and appends their results in call order.
 *
 * Cancellation: running calls resolve at once as cancelled results (the pipeline's guarantee) and are logged as
 * such; calls of later runs never start and are logged as not run (a `tool/result` with no `tool/call` before it),
 * so every call of the assistant message has exactly one result.
 *
 * @throws {Abandoned} when the turn is abandoned mid-way (nothing more is appended)
 */
export async function runToolCalls(
  host: BarrierHost,
  calls: readonly ToolCallRequest[],
): Promise<void> {
  const { tools, ctx } = host;
  const runs = barrierRuns(calls, (name) => tools?.get(name, { ctx })?.concurrency ?? "serial");
  for (const run of runs) {
    if (host.abandoned()) throw new Abandoned();
    if (host.signal.aborted) {
      for (const call of run) host.appender.append("tool/result", notRun(call, host.signal));
      continue;
    }
    const results: (ToolResultPayload | undefined)[] = run.map((call) => host.refuse?.(call));
    for (let i = 0; i < run.length; i++) {
      if (results[i] !== undefined) continue;
      const call = run[i]!;
      host.appender.append("tool/call", {
        id: call.id,
        name: call.name,
        args: call.args,
        ...(call.argsError === undefined ? {} : { args_error: call.argsError }),
        ...host.callFields,
      });
    }
    await host.appender.flush();
    const settled = await Promise.all(
      run.map((call, i) => results[i] ?? execute(host, call)),
    );
    if (host.abandoned()) throw new Abandoned();
    for (const result of settled) host.appender.append("tool/result", result);
  }
}

function execute(host: BarrierHost, call: ToolCallRequest): Promise<ToolResultPayload> {
  if (host.tools === undefined) {
    return Promise.resolve({
      id: call.id,
      name: call.name,
      content:
        `Unknown tool "${call.name}": no tools are available. Answer without calling a tool.`,
      is_error: true,
    });
  }
  return host.tools.execute(call, {
    ctx: host.ctx,
    session_id: host.session_id,
    agent_id: host.agent_id,
    signal: host.signal,
  });
}

function notRun(call: ToolCallRequest, signal: AbortSignal): ToolResultPayload {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return {
    id: call.id,
    name: call.name,
    content:
      `The call to "${call.name}" was not run: the turn was cancelled before it started (${reason}).`,
    is_error: true,
  };
}
