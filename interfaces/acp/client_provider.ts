/**
 * The ACP-client subagent provider (`provider: acp`, plugin `terret-subagents-acp`, row `subagents.acp`): a subagent
 * type may name an external agent that speaks the Agent Client Protocol on stdio (another `trt acp`, say). Terret
 * spawns it through the subprocess seam (so through the sandbox), drives one `session/prompt` as an ACP client, and
 * answers its `session/request_permission` with the child's own policy: the child session's allow list, then the
 * approval gate (an unattended child is never parked: rules decide, the rest is denied).
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { z } from "zod";
import { type Context, definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { SessionsKey, SubagentsKey, SubprocessKey, ToolPolicyKey } from "@terret/core";
import type { ChildSpec, SubagentProvider } from "@terret/core/subagents";
import { WorkspaceKey } from "@terret/core/seams";
import { ApprovalGateKey } from "@terret/core/tools";

/** The `subagents.acp` row's config. */
export interface AcpSubagentsConfig {
  /** Milliseconds `initialize` and `session/new` may take before the child fails. */
  readonly start_timeout_ms: number;
}

/** The `subagents.acp` row's config schema. */
export const acpSubagentsConfig: z.ZodType<AcpSubagentsConfig> = z.strictObject({
  start_timeout_ms: z.number().int().min(100).max(600_000).default(60_000).describe(
    "Milliseconds the external agent may take to answer initialize and session/new",
  ),
}) as z.ZodType<AcpSubagentsConfig>;

/** How an ACP `stopReason` closes the child's turn. */
function statusOf(stopReason: string): "completed" | "cancelled" | "failed" {
  if (stopReason === "end_turn") return "completed";
  if (stopReason === "cancelled") return "cancelled";
  return "failed";
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && "message" in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}

/** Rejects with a timeout error when `work` takes longer than `ms`. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answers one `session/request_permission` with the child's policy: `allow_once` only when the child session's
 * allow list admits the tool and the approval gate allows the exact call; otherwise `reject_once`. Fails closed: no
 * policy, no gate, or a failure while deciding is a rejection.
 */
async function decide(
  ctx: Context,
  spec: ChildSpec,
  params: acp.RequestPermissionRequest,
): Promise<acp.RequestPermissionResponse> {
  const pick = (kind: "allow_once" | "reject_once"): acp.RequestPermissionResponse => {
    const option = params.options.find((candidate) => candidate.kind === kind);
    return option === undefined
      ? { outcome: { outcome: "cancelled" } }
      : { outcome: { outcome: "selected", optionId: option.optionId } };
  };
  const call = params.toolCall as { toolCallId: string; title?: unknown; rawInput?: unknown };
  const name = typeof call.title === "string" ? call.title : "";
  const args = typeof call.rawInput === "object" && call.rawInput !== null &&
      !Array.isArray(call.rawInput)
    ? call.rawInput as Record<string, unknown>
    : {};
  try {
    const policy = ctx.maybe(ToolPolicyKey);
    const verdict = policy === undefined
      ? { allowed: false }
      : await policy.check(name, { session_id: spec.child_id, signal: spec.signal });
    if (!verdict.allowed) return pick("reject_once");
    const gate = ctx.maybe(ApprovalGateKey);
    if (gate === undefined) return pick("reject_once");
    const reviewed = await gate.review({
      id: call.toolCallId,
      name,
      args,
      approval: "policy",
      session_id: spec.child_id,
      agent_id: spec.child_id,
    }, { ctx, signal: spec.signal });
    return pick(reviewed.allowed ? "allow_once" : "reject_once");
  } catch (error) {
    ctx.logger.log("warn", `acp subagent "${spec.child_id}": a permission request was denied`, {
      error,
    });
    return pick("reject_once");
  }
}

/** The provider: one external ACP agent process per child, its turn recorded in the child's session. */
export function acpClientProvider(ctx: Context, config: AcpSubagentsConfig): SubagentProvider {
  return {
    async run(spec: ChildSpec): Promise<void> {
      const sessions = ctx.get(SessionsKey);
      const sessionId = spec.child_id;
      const append = (type: string, payload: unknown) =>
        sessions.append(sessionId, { type, payload });
      await append("turn/start", { agent_id: sessionId, provider: "acp" });
      await append("user/message", { content: spec.prompt });
      const { status, text, error } = await drive(ctx, config, spec);
      if (text !== "") await append("assistant/message", { parts: [{ type: "text", text }] });
      await append("turn/end", error === undefined ? { status } : { status, error });
    },
  };
}

interface Driven {
  readonly status: "completed" | "cancelled" | "failed";
  readonly text: string;
  readonly error?: { readonly code: string; readonly message: string };
}

async function drive(
  ctx: Context,
  config: AcpSubagentsConfig,
  spec: ChildSpec,
): Promise<Driven> {
  const command = spec.type.command;
  let text = "";
  const failed = (code: string, message: string): Driven => ({
    status: spec.signal.aborted ? "cancelled" : "failed",
    text,
    error: { code: spec.signal.aborted ? "Cancelled" : code, message },
  });
  if (command === undefined || command.length === 0) {
    return failed(
      "AcpCommandMissing",
      `the subagent type "${spec.type.name}" names provider acp but no command`,
    );
  }
  const cwd = spec.type.cwd ?? ctx.maybe(WorkspaceKey)?.dirs[0];
  if (cwd === undefined) {
    return failed(
      "AcpNoWorkspace",
      `the subagent type "${spec.type.name}" has no cwd and the workspace row grants no directory`,
    );
  }
  let handle;
  try {
    handle = await ctx.get(SubprocessKey).spawn(command, {
      cwd,
      stdin: "piped",
      stderr: "piped",
      signal: spec.signal,
    });
  } catch (error) {
    return failed("AcpSpawnFailed", `Cannot start "${command[0]}": ${messageOf(error)}`);
  }
  // stderr is the agent's log: kept (the tail) for the failure message, never parsed.
  let stderr = "";
  const drained = handle.stderr?.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        stderr = (stderr + chunk).slice(-2000);
      },
    }),
  ).catch(() => {});
  const app = acp.client({ name: "terret" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
        text += update.content.text;
      }
    })
    .onRequest(
      acp.methods.client.session.requestPermission,
      ({ params }) => decide(ctx, spec, params),
    );
  const connection = app.connect(acp.ndJsonStream(handle.stdin!, handle.stdout));
  const agent = connection.agent;
  let sessionId: string | undefined;
  const cancel = (): void => {
    if (sessionId !== undefined) {
      agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
    }
  };
  spec.signal.addEventListener("abort", cancel, { once: true });
  try {
    const init = await within(
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "terret", version: "0.1.0" },
      }),
      config.start_timeout_ms,
      "initialize",
    );
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      return failed(
        "AcpVersion",
        `the agent speaks ACP version ${init.protocolVersion}, not ${acp.PROTOCOL_VERSION}`,
      );
    }
    ({ sessionId } = await within(
      agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }),
      config.start_timeout_ms,
      "session/new",
    ));
    if (spec.signal.aborted) cancel();
    const answer = await agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: spec.prompt }],
    });
    const status = statusOf(answer.stopReason);
    return status === "completed" ? { status, text } : status === "cancelled"
      ? {
        status,
        text,
        error: { code: "Cancelled", message: "the external agent's turn was cancelled" },
      }
      : {
        status,
        text,
        error: {
          code: "AcpStopReason",
          message: `the external agent stopped: ${answer.stopReason}`,
        },
      };
  } catch (error) {
    const tail = stderr.trim().split("\n").at(-1) ?? "";
    return failed(
      "AcpFailed",
      `the external agent failed: ${messageOf(error)}${tail === "" ? "" : ` (stderr: ${tail})`}`,
    );
  } finally {
    spec.signal.removeEventListener("abort", cancel);
    connection.close();
    await handle.stdin?.close().catch(() => {});
    await handle.kill();
    await drained;
  }
}

/**
 * The `subagents.acp` row: registers the `acp` provider with the subagents service, for as long as the row lives.
 * It needs the subprocess seam (every external agent is spawned through the sandbox) and the session log.
 */
export const acpSubagentsPlugin: Plugin<AcpSubagentsConfig> = definePlugin({
  name: "terret-subagents-acp",
  description:
    "The ACP-client subagent provider (row subagents.acp): subagent types with provider acp run an external ACP " +
    "agent through the sandbox, its permission requests answered by the child's policy",
  inject: [SubagentsKey, SubprocessKey, SessionsKey],
  config: acpSubagentsConfig,
  permissions(): HostPermissions {
    return {};
  },
  apply(ctx, config) {
    ctx.get(SubagentsKey).registerProvider(ctx, "acp", acpClientProvider(ctx, config));
  },
});
