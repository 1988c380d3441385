/**
 * Transport factories for the two MCP transports: stdio through the `subprocess` seam, and Streamable HTTP.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Logger } from "@terret/hames";
import type { Subprocess } from "../seams/subprocess.ts";
import type { OpenedTransport } from "./connection.ts";
import { SubprocessStdioTransport } from "./stdio_transport.ts";

/** What a stdio server is started as. */
export interface StdioTarget {
  readonly server: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Characters of stderr kept for diagnostics. */
  readonly stderrLimit: number;
}

/**
 * Opens stdio connections: each attempt spawns the server anew through the subprocess seam (and so through the
 * sandbox). Stderr lines are logged at `debug`.
 */
export function stdioOpener(
  subprocess: Subprocess,
  target: StdioTarget,
  logger: Logger,
): () => Promise<OpenedTransport> {
  return () => {
    const transport = new SubprocessStdioTransport(subprocess, {
      argv: target.argv,
      cwd: target.cwd,
      env: target.env,
      stderrLimit: target.stderrLimit,
      onDiagnostic: (line) =>
        logger.log("debug", `MCP server "${target.server}" says`, { line: line.slice(0, 1000) }),
    });
    return Promise.resolve({
      transport,
      pid: () => transport.pid,
      closeReason: () => transport.closeReason,
      kill: (reason) => transport.kill(reason),
      close: () => transport.close(),
    });
  };
}

/** What a Streamable HTTP server is reached at. */
export interface HttpTarget {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch;
}

const DELETE_GRACE_MS = 2000;

/**
 * Opens Streamable HTTP connections: each attempt is a fresh SDK transport (a new session). Closing sends the
 * session DELETE (bounded to two seconds) before aborting whatever is still in flight.
 */
export function httpOpener(target: HttpTarget): () => Promise<OpenedTransport> {
  return () => {
    let lastError: string | undefined;
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: { ...target.headers } },
      ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
    });
    // The SDK client chains whatever `onerror` is installed before it connects.
    transport.onerror = (error: Error) => lastError = error.message;
    let closing: Promise<void> | undefined;
    const shutdown = (polite: boolean) => {
      closing ??= (async () => {
        if (polite && transport.sessionId !== undefined) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          await Promise.race([
            transport.terminateSession().catch(() => {}),
            new Promise((resolve) => timer = setTimeout(resolve, DELETE_GRACE_MS)),
          ]);
          clearTimeout(timer);
        }
        await transport.close().catch(() => {});
      })();
      return closing;
    };
    return Promise.resolve({
      transport,
      closeReason: () => lastError,
      kill: (reason) => {
        lastError ??= reason;
        return shutdown(false);
      },
      close: () => shutdown(true),
    });
  };
}
