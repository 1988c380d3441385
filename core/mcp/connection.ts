/**
 * One MCP server's connection: the SDK client over a fresh transport per attempt, per-call timeouts that poison
 * it, reconnection on next use, and jittered restart backoff for a server that died.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  McpError,
  ResourceUpdatedNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation";
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";

/** Where a connection stands. */
export type McpConnectionState =
  | "idle" // not connected; the next use connects (never connected yet, or reset after a timeout)
  | "connecting" // a handshake is in flight (not reported through onState)
  | "ready"
  | "unavailable" // lost; a restart is scheduled or running, and calls fail fast meanwhile
  | "stopped";

/** A transport opened for one connection attempt. */
export interface OpenedTransport {
  readonly transport: Transport;
  /** The server's host process id, for a spawned (stdio) server that has started. */
  pid?(): number | undefined;
  /** Why the connection ended, once it has (a stdio server's exit status and stderr tail). */
  closeReason(): string | undefined;
  /** Ends the connection at once (a wedged server); never throws. */
  kill(reason: string): Promise<void>;
  /** Ends the connection politely (stdin EOF, HTTP session DELETE); never throws. */
  close(): Promise<void>;
  /** Whether an error the transport reported out of band means the connection is lost (e.g. an unresumable stream). */
  isFatal?(error: Error): boolean;
}

/** Options of {@linkcode McpConnection}. */
export interface McpConnectionOptions {
  /** The server name, for messages. */
  readonly server: string;
  /** Opens a fresh transport for each connection attempt. */
  readonly open: () => Promise<OpenedTransport>;
  /** Milliseconds a request may take before the connection is reset. */
  readonly callTimeoutMs: number;
  /** Milliseconds the handshake may take. */
  readonly connectTimeoutMs: number;
  /** Restart backoff: the first delay and the cap, in milliseconds. */
  readonly restart: { readonly initialMs: number; readonly maxMs: number };
  readonly logger: Logger;
  /** The jitter source (default `Math.random`). */
  readonly random?: () => number;
  /** Runs after every successful connection (re-list tools, re-read resources); failures are logged. */
  readonly onConnected?: () => Promise<void>;
  /** The server said its tool list changed. */
  readonly onToolsChanged?: () => void;
  /** The server said a subscribed resource changed. */
  readonly onResourceUpdated?: (uri: string) => void;
  /** The state changed; `reason` says why a connection was lost or reset. */
  readonly onState?: (state: McpConnectionState, detail: StateDetail) => void;
}

/** Detail of a state change. */
export interface StateDetail {
  readonly reason?: string;
  /** Milliseconds until the next restart attempt (state `unavailable`). */
  readonly retryInMs?: number;
}

/** The client identity sent in `initialize`. */
export const MCP_CLIENT_INFO: { readonly name: string; readonly version: string } = Object.freeze({
  name: "terret",
  version: "0.1.0",
});

/** Structured content is validated by the tool roster (across every page of tools), not by the SDK client. */
const PASS_THROUGH: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};
const MAX_PAGES = 1000;

/**
 * The connection to one MCP server.
 *
 * Contract: requests never hang past `callTimeoutMs`. A request that times out resets ("poisons") the connection:
 * the transport is killed and the next use reconnects. A connection that ends on its own (the server exited, the
 * HTTP endpoint stopped answering) makes the server `unavailable`: a restart is scheduled with jittered,
 * doubling backoff (`initialMs` … `maxMs`, forever), and requests fail at once with `TerretError` code
 * `McpUnavailable` naming the reason until a restart succeeds. An HTTP session the server forgot is re-initialised
 * and the request retried once. Errors reach callers as `TerretError` with codes `McpUnavailable`, `McpTimeout`,
 * `McpError` (a JSON-RPC error the server answered) and `McpProtocol` (a result the client could not accept), each
 * message written to be read by a model; an aborted `signal` rejects with its reason.
 */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #state: McpConnectionState = "idle";
  #client: Client | undefined;
  #opened: OpenedTransport | undefined;
  #generation = 0;
  #connecting: Promise<Client> | undefined;
  #restarting = false;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #reason: string | undefined;
  #retryDelay = 0;

  /** @param options how to reach the server and whom to tell what happened */
  constructor(options: McpConnectionOptions) {
    this.#options = options;
  }

  /** The current state. */
  get state(): McpConnectionState {
    return this.#state;
  }

  /** Why the server was last lost or reset, if it was. */
  get reason(): string | undefined {
    return this.#reason;
  }

  /** The host process id of a spawned (stdio) server while connected. */
  get pid(): number | undefined {
    return this.#opened?.pid?.();
  }

  /** The connected SDK client's view of the server, when ready. */
  get server(): Client | undefined {
    return this.#client;
  }

  /**
   * Connects and runs `onConnected`, whose failure it passes on (the caller decides whether the server is usable;
   * `close()` ends the connection either way).
   *
   * @throws {TerretError} `McpUnavailable` when the server cannot be reached
   */
  async start(): Promise<void> {
    await this.#connect();
    await this.#options.onConnected?.();
  }

  /**
   * Schedules connection attempts with backoff until one succeeds (for a server not required at boot, after
   * `start()` failed with `error`).
   */
  startInBackground(error: unknown): void {
    this.#lost(this.#generation, reasonOf(error));
  }

  /** Lists every tool, following `nextCursor` to the end. */
  listTools(options: { signal?: AbortSignal } = {}): Promise<Tool[]> {
    return this.#request(async (client, requestOptions) => {
      const tools: Tool[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await client.listTools(
          cursor === undefined ? {} : { cursor },
          requestOptions,
        );
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) return tools;
        if (seen.has(cursor)) {
          throw this.#protocol(`repeated the tools/list cursor "${cursor}"`);
        }
        seen.add(cursor);
      }
      throw this.#protocol(`returned more than ${MAX_PAGES} pages of tools`);
    }, options.signal);
  }

  /** Calls a tool; resolves to the server's result (which may say `isError`). */
  callTool(
    name: string,
    args: Readonly<Record<string, unknown>>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.#request(
      (client, requestOptions) =>
        client.callTool({ name, arguments: { ...args } }, undefined, requestOptions),
      options.signal,
    );
  }

  /** Reads a resource's contents. */
  readResource(uri: string, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return this.#request(
      (client, requestOptions) => client.readResource({ uri }, requestOptions),
      options.signal,
    );
  }

  /** Subscribes to a resource's updates when the server supports subscriptions; resolves false otherwise. */
  subscribeResource(uri: string): Promise<boolean> {
    return this.#request(async (client, requestOptions) => {
      if (client.getServerCapabilities()?.resources?.subscribe !== true) return false;
      await client.subscribeResource({ uri }, requestOptions);
      return true;
    }, undefined);
  }

  /** Stops for good: cancels any restart and closes the connection politely. */
  async close(): Promise<void> {
    if (this.#state === "stopped") return;
    clearTimeout(this.#timer);
    this.#generation++;
    const opened = this.#opened;
    this.#client = undefined;
    this.#opened = undefined;
    this.#setState("stopped", {});
    await Promise.all([opened?.close(), this.#connecting?.catch(() => {})]);
  }

  async #request<T>(
    run: (client: Client, options: { timeout: number; signal?: AbortSignal }) => Promise<T>,
    signal: AbortSignal | undefined,
    retried = false,
  ): Promise<T> {
    signal?.throwIfAborted();
    const client = await this.#usable();
    const generation = this.#generation;
    const requestOptions = signal === undefined
      ? { timeout: this.#options.callTimeoutMs }
      : { timeout: this.#options.callTimeoutMs, signal };
    try {
      return await run(client, requestOptions);
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      if (error instanceof TerretError) throw error;
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        const reason = `no answer within ${this.#options.callTimeoutMs} ms`;
        this.#poison(generation, reason);
        throw new TerretError(
          "McpTimeout",
          `MCP server "${this.#options.server}" gave ${reason}; the connection was reset and the next call reconnects`,
        );
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        const reason = this.#lost(generation, this.#closeReason(generation) ?? "connection closed");
        throw this.#unavailable(reason);
      }
      if (error instanceof McpError) {
        throw new TerretError(
          "McpError",
          `MCP server "${this.#options.server}" answered with error ${error.code}: ${
            stripPrefix(error.message)
          }`,
          { cause: error },
        );
      }
      const status = httpStatus(error);
      if (status !== undefined && isSessionGone(status, error) && !retried) {
        this.#poison(generation, "the HTTP session expired");
        return this.#request(run, signal, true);
      }
      if (status !== undefined && status < 500 && status !== 408 && status !== 429) {
        throw new TerretError(
          "McpError",
          `MCP server "${this.#options.server}" refused the request: ${(error as Error).message}`,
          { cause: error },
        );
      }
      if (isValidationError(error)) {
        throw this.#protocol(
          `sent a result the client could not accept: ${(error as Error).message}`,
        );
      }
      // Anything else is the transport failing (a refused connection, a broken pipe, a 5xx, a body that is not
      // JSON): the server is lost.
      const why = error instanceof SyntaxError
        ? `sent malformed JSON-RPC: ${messageOf(error)}`
        : messageOf(error);
      const reason = this.#lost(generation, why);
      throw this.#unavailable(reason);
    }
  }

  /** The client to send on, connecting now when idle; fails fast while unavailable. */
  async #usable(): Promise<Client> {
    if (this.#state === "ready" && this.#client !== undefined) return this.#client;
    if (this.#state === "stopped") {
      throw new TerretError("McpUnavailable", `MCP server "${this.#options.server}" is stopped`);
    }
    if (this.#state === "unavailable" || this.#restarting) {
      throw this.#unavailable(this.#reason ?? "not connected");
    }
    let client: Client;
    try {
      client = await this.#connect();
    } catch (error) {
      const reason = this.#lost(this.#generation, (error as Error).message);
      throw this.#unavailable(reason);
    }
    void this.#afterConnect();
    return client;
  }

  #connect(): Promise<Client> {
    this.#connecting ??= this.#attemptConnect().finally(() => this.#connecting = undefined);
    return this.#connecting;
  }

  async #attemptConnect(): Promise<Client> {
    const generation = ++this.#generation;
    this.#state = "connecting";
    let opened: OpenedTransport | undefined;
    try {
      opened = await this.#options.open();
      const client = new Client(MCP_CLIENT_INFO, {
        capabilities: {},
        jsonSchemaValidator: PASS_THROUGH,
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (generation === this.#generation) this.#options.onToolsChanged?.();
      });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        if (generation === this.#generation) {
          this.#options.onResourceUpdated?.(notification.params.uri);
        }
      });
      client.onclose = () =>
        void this.#lost(generation, opened?.closeReason() ?? "connection closed");
      client.onerror = (error) => {
        this.#options.logger.log(
          "debug",
          `MCP server "${this.#options.server}" reported an error`,
          {
            error,
          },
        );
        if (this.#state === "ready" && opened?.isFatal?.(error) === true) {
          this.#lost(generation, opened.closeReason() ?? error.message);
        }
      };
      this.#opened = opened;
      await client.connect(opened.transport, { timeout: this.#options.connectTimeoutMs });
      if (generation !== this.#generation) throw new Error("the connection was closed");
      this.#client = client;
      this.#attempt = 0;
      this.#reason = undefined;
      this.#setState("ready", {});
      return client;
    } catch (error) {
      const why = error instanceof McpError && error.code === ErrorCode.RequestTimeout
        ? `no answer to initialize within ${this.#options.connectTimeoutMs} ms`
        : opened?.closeReason() ?? stripPrefix(messageOf(error));
      if (generation === this.#generation) {
        // The SDK closes a transport whose handshake failed; that late onclose belongs to no live connection.
        this.#opened = undefined;
        this.#generation++;
      }
      if (this.#state === "connecting") this.#state = "idle";
      await opened?.kill(why);
      throw new TerretError(
        "McpUnavailable",
        `Cannot connect to MCP server "${this.#options.server}": ${why}`,
        { cause: error },
      );
    }
  }

  async #afterConnect(): Promise<void> {
    try {
      await this.#options.onConnected?.();
    } catch (error) {
      this.#options.logger.log(
        "warn",
        `MCP server "${this.#options.server}" connected, but refreshing it failed`,
        {
          error,
        },
      );
    }
  }

  /** Resets a connection after a timeout: killed now, reconnected on next use. */
  #poison(generation: number, reason: string): void {
    if (generation !== this.#generation || this.#state === "stopped") return;
    const opened = this.#opened;
    this.#generation++;
    this.#client = undefined;
    this.#opened = undefined;
    this.#reason = reason;
    this.#setState("idle", { reason });
    void opened?.kill(reason);
  }

  /** Records a lost connection of `generation` (once) and schedules a restart; returns the reason in force. */
  #lost(generation: number, reason: string): string {
    if (generation !== this.#generation) return this.#reason ?? reason;
    // A failed handshake is reported by the connect attempt itself; a stopped or already lost server stays so.
    if (this.#state !== "ready" && this.#state !== "idle") return this.#reason ?? reason;
    const opened = this.#opened;
    this.#generation++;
    this.#client = undefined;
    this.#opened = undefined;
    this.#reason = reason;
    void opened?.kill(reason);
    this.#scheduleRestart();
    return reason;
  }

  #scheduleRestart(): void {
    const { initialMs, maxMs } = this.#options.restart;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.#attempt, 30));
    const delay = Math.round(base / 2 + (this.#options.random ?? Math.random)() * base / 2);
    this.#attempt++;
    this.#retryDelay = delay;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#restart(), delay);
    this.#setState("unavailable", { reason: this.#reason ?? "", retryInMs: delay });
  }

  async #restart(): Promise<void> {
    this.#timer = undefined;
    if (this.#state !== "unavailable") return;
    this.#restarting = true;
    try {
      await this.#connect();
    } catch (error) {
      this.#restarting = false;
      if ((this.#state as McpConnectionState) === "stopped") return;
      this.#reason = reasonOf(error);
      this.#options.logger.log("warn", `MCP server "${this.#options.server}" failed to restart`, {
        reason: this.#reason,
      });
      this.#scheduleRestart();
      return;
    }
    this.#restarting = false;
    await this.#afterConnect();
  }

  #closeReason(generation: number): string | undefined {
    return generation === this.#generation ? this.#opened?.closeReason() : this.#reason;
  }

  #unavailable(reason: string): TerretError {
    const retry = this.#state === "unavailable" || this.#restarting
      ? `; a restart is scheduled within ${Math.max(1, Math.ceil(this.#retryDelay / 1000))} s`
      : "";
    return new TerretError(
      "McpUnavailable",
      `MCP server "${this.#options.server}" is unavailable: ${reason}${retry}`,
    );
  }

  #protocol(what: string): TerretError {
    return new TerretError("McpProtocol", `MCP server "${this.#options.server}" ${what}`);
  }

  #setState(state: McpConnectionState, detail: StateDetail): void {
    this.#state = state;
    this.#options.onState?.(state, detail);
  }
}

/** Why a connection attempt failed, without the "Cannot connect to …" preamble. */
function reasonOf(error: unknown): string {
  return messageOf(error).replace(/^Cannot connect to MCP server "[^"]*": /, "");
}

/** An error's message; a foreign error's cause is added (`fetch failed: … Connection refused`). */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof TerretError || !(error.cause instanceof Error)) return error.message;
  return `${error.message}: ${error.cause.message}`;
}

/** Drops the SDK's `MCP error -32000: ` prefix. */
function stripPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, "");
}

function httpStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return (error as Error | null)?.constructor?.name === "StreamableHTTPError" &&
      typeof code === "number" && code > 0
    ? code
    : undefined;
}

/** A 404, or the SDK server's 400 "No valid session ID", means the server forgot the session. */
function isSessionGone(status: number, error: unknown): boolean {
  return status === 404 || (status === 400 && /session/i.test(messageOf(error)));
}

function isValidationError(error: unknown): boolean {
  return (error as Error | null)?.name === "ZodError" ||
    (error as Error | null)?.constructor?.name === "ZodError";
}
