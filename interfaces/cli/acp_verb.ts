/**
 * `trt acp`: boot the profile and serve it to one editor over the Agent Client Protocol on stdin/stdout. Nothing
 * but ACP goes to stdout; the host's logs go to stderr.
 *
 * @module
 */
import { bootResolved, type ResolvedProfile } from "@terret/terret";
import {
  AgentsKey,
  type Approvals,
  ApprovalsKey,
  CORE_ERRORS,
  Llm,
  SessionsKey,
  ToolsKey,
  WorkspaceKey,
} from "@terret/core";
import { type AcpApprovals, AcpConfigKey, ndJsonStream, serveAcp } from "@terret/acp";
import type { TrtIo, VerbContext } from "./trt.ts";

/**
 * The profile with its socket-style interface rows turned off: an editor spawns `trt acp` per window, so it must not
 * bind the listen address a `trt serve` on the same home holds. `interfaces.acp` (settings only) stays.
 */
export function acpProfile(resolved: ResolvedProfile): ResolvedProfile {
  return {
    ...resolved,
    rows: resolved.rows.map((row) =>
      row.id.startsWith("interfaces.") && row.id !== "interfaces.acp" && !row.disabled
        ? { ...row, disabled: true }
        : row
    ),
  };
}

function stdoutStream(io: TrtIo): WritableStream<Uint8Array> {
  if (io.stdoutBytes !== undefined) return io.stdoutBytes;
  const decoder = new TextDecoder();
  return new WritableStream({
    write(bytes) {
      io.stdout(decoder.decode(bytes, { stream: true }));
    },
  });
}

/**
 * `trt acp`. Serves until the client closes stdin (or SIGINT/SIGTERM), then waits for every running turn to end in
 * the log (a client that went away never cancels a turn) and disposes the host.
 */
export async function acpVerb(context: VerbContext): Promise<number> {
  const { io } = context;
  if (io.stdin === undefined) {
    io.stderr("trt acp: cannot serve ACP: this process has no standard input stream\n");
    return 1;
  }
  const resolved = acpProfile(await context.resolve());
  const booted = await bootResolved(resolved, {
    ...context.resolveOptions,
    allowConfigCode: context.allowConfigCode,
  });
  try {
    const { ctx } = booted;
    const agents = ctx.get(AgentsKey);
    const roots = ctx.maybe(WorkspaceKey)?.dirs ?? [];
    const approvals = ctx.maybe(ApprovalsKey);
    const settings = ctx.maybe(AcpConfigKey);
    if (roots.length === 0) {
      io.stderr(
        "trt acp: the workspace row grants no directory, so every session/new is refused (set workspace.dirs)\n",
      );
    }
    const connection = serveAcp(ndJsonStream(stdoutStream(io), io.stdin), {
      sessions: ctx.get(SessionsKey),
      tools: ctx.get(ToolsKey),
      agents,
      roots,
      logger: ctx.logger,
      clientFs: settings?.client_fs ?? false,
      clientTerminal: settings?.client_terminal ?? false,
      images: () => ctx.get(Llm).capabilities("main").vision,
      ...(approvals === undefined ? {} : { approvals: acpApprovals(approvals) }),
    });
    const stop = Promise.withResolvers<void>();
    io.signal?.addEventListener("abort", () => stop.resolve(), { once: true });
    await Promise.race([
      connection.closed.catch((error: unknown) => {
        ctx.logger.log("warn", "acp: the connection ended with an error", { error: String(error) });
      }),
      stop.promise,
    ]);
    connection.close();
    await Promise.all(agents.list().map((agent) => agent.idle()));
  } finally {
    await booted.dispose();
  }
  return 0;
}

/**
 * The ACP permission answers recorded through the approvals row: the client's option becomes `approval/resolved`
 * with `by.kind = "acp"`; `allow_always`/`reject_always` add the session rule the socket's `remember` would, and
 * when no rule can be derived safely from the call (a compound Bash command) the once-only verdict is recorded.
 */
function acpApprovals(approvals: Approvals): AcpApprovals {
  return {
    async resolve(sessionId, requestId, verdict) {
      const answer = {
        decision: verdict.decision,
        by: verdict.by.client === undefined
          ? { kind: "acp" as const }
          : { kind: "acp" as const, id: verdict.by.client },
        reason: verdict.reason,
      };
      try {
        await approvals.answer(sessionId, requestId, { ...answer, remember: verdict.remember });
      } catch (error) {
        if (!verdict.remember || !CORE_ERRORS.is(error, "CannotRemember")) throw error;
        await approvals.answer(sessionId, requestId, { ...answer, remember: false });
      }
    },
  };
}
