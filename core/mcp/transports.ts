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
  /** Called with each stderr line (and startup noise on stdout), besides the `debug` log. */
  readonly onDiagnostic?: (line: string) => void;
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
      onDiagnostic: (line) => {
        logger.log("debug", `MCP server "${target.server}" says`, { line: line.slice(0, 1000) });
        target.onDiagnostic?.(line);
      },
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
 * Opens Streamable HTTP connections: each attempt is a fresh SDK transport (a new session). A broken event stream
 * is resumed (`Last-Event-ID`) a few times and then counts as a lost connection. Closing sends the session DELETE
 * (bounded to two seconds) before aborting whatever is still in flight.
 */
export function httpOpener(target: HttpTarget): () => Promise<OpenedTransport> {
  return () => {
    let lastError: string | undefined;
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: { ...target.headers } },
      reconnectionOptions: RECONNECTION,
      ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
    });
    // The SDK client chains whatever `onerror` is installed before it connects.
    let broke: string | undefined;
    let resume: string | undefined;
    transport.onerror = (error: Error) => {
      const message = error.message;
      if (GAVE_UP.test(message)) return;
      const disconnected = /^SSE stream disconnected: (?:\w*Error: )?(.*)$/s.exec(message);
      const failed = /^Failed to reconnect SSE stream: (.*)$/s.exec(message);
      if (disconnected !== null) broke ??= disconnected[1];
      else if (failed !== null) resume = failed[1];
      else lastError = message;
    };
    const closeReason = () =>
      resume === undefined
        ? lastError
        : `its event stream broke${
          broke === undefined ? "" : ` (${broke})`
        } and could not be resumed (${resume})`;
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
      closeReason,
      kill: (reason) => {
        lastError ??= reason;
        return shutdown(false);
      },
      close: () => shutdown(true),
      // The SDK gives up resuming an event stream (the notification stream, or a call's response stream) after a
      // few attempts and then stays silent: the session is as good as lost.
      isFatal: (error) => GAVE_UP.test(error.message),
    });
  };
}

/** Resuming a broken event stream: three attempts over about 1.4 s unless the server says otherwise (`retry`). */
const RECONNECTION = {
  initialReconnectionDelay: 200,
  maxReconnectionDelay: 2000,
  reconnectionDelayGrowFactor: 2,
  maxRetries: 3,
};
const GAVE_UP = /^Maximum reconnection attempts/;
