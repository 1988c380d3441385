/**
 * `trt acp`: boot the profile and serve it to one editor over the Agent Client Protocol on stdin/stdout. Nothing
 * but ACP goes to stdout; the host's logs go to stderr.
 *
 * @module
 */
import { bootResolved, type ResolvedProfile } from "@terret/terret";
import { AgentsKey, SessionsKey, WorkspaceKey } from "@terret/core";
import { ndJsonStream, serveAcp } from "@terret/acp";
import type { TrtIo, VerbContext } from "./trt.ts";

/**
 * The profile with its socket-style interface rows turned off: an editor spawns `trt acp` per window, so it must not
 * bind the listen address a `trt serve` on the same home holds.
 */
export function acpProfile(resolved: ResolvedProfile): ResolvedProfile {
  return {
    ...resolved,
    rows: resolved.rows.map((row) =>
      row.id.startsWith("interfaces.") && !row.disabled ? { ...row, disabled: true } : row
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
    if (roots.length === 0) {
      io.stderr(
        "trt acp: the workspace row grants no directory, so every session/new is refused (set workspace.dirs)\n",
      );
    }
    const connection = serveAcp(ndJsonStream(stdoutStream(io), io.stdin), {
      sessions: ctx.get(SessionsKey),
      agents,
      roots,
      logger: ctx.logger,
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
