/**
 * One MCP server as a tool source: its connection, its tool roster (reconciled at connect and on
 * `tools/list_changed`) and its resource sections.
 *
 * @module
 */
import { type Logger, TerretError } from "@terret/hames";
import type { McpServerConfig } from "./config.ts";
import { McpConnection, type McpConnectionState, type OpenedTransport } from "./connection.ts";
import { toToolOutcome } from "./content.ts";
import type { ToolOutcome } from "../tools/tool.ts";
import type { McpServerStatePayload, McpToolsReconciledPayload } from "./events.ts";
import { type RegisterSection, ResourceSections } from "./resources.ts";
import { type RegisterTool, ToolRoster } from "./roster.ts";

/** Options of {@linkcode McpToolSource}. */
export interface McpToolSourceOptions {
  /** The row's config (defaults applied). */
  readonly config: McpServerConfig;
  /** Opens a fresh transport for each connection attempt. */
  readonly open: () => Promise<OpenedTransport>;
  /** Registers a tool as an effect. */
  readonly registerTool: RegisterTool;
  /** Registers a prompt section as an effect (required when `config.resources` is not empty). */
  readonly registerSection?: RegisterSection;
  readonly logger: Logger;
  /** Told of every connection state change. */
  readonly onState?: (payload: McpServerStatePayload) => void;
  /** Told of every reconciliation. */
  readonly onReconciled?: (payload: McpToolsReconciledPayload) => void;
  /** The restart jitter source (default `Math.random`). */
  readonly random?: () => number;
}

/**
 * An MCP server whose tools are registered as `mcp__<server>__<tool>`.
 *
 * Contract: `start()` connects and registers the server's tools before it resolves; when the server cannot be
 * reached it rejects with `TerretError` code `McpUnavailable` if the config is `required`, and otherwise resolves
 * with no tools and keeps retrying with backoff (registering the tools once a connection succeeds). A tool name
 * clash at start rejects with `ToolNameClash`; later clashes leave both tools out. Every (re)connection and every
 * `tools/list_changed` re-lists the tools and reconciles them; concurrent triggers coalesce into one more
 * listing. A registered tool's `execute` resolves to an `is_error` result for a tool error, a timeout or an
 * unavailable server, and never hangs past the call timeout. `close()` unregisters every tool and section and
 * shuts the server down.
 */
export class McpToolSource {
  readonly #options: McpToolSourceOptions;
  readonly #connection: McpConnection;
  readonly #roster: ToolRoster;
  readonly #resources: ResourceSections;
  #strict = false;
  #refreshing: Promise<void> | undefined;
  #dirty = false;
  #closed = false;

  /** @param options the config, the transport factory and the registries */
  constructor(options: McpToolSourceOptions) {
    const { config, logger } = options;
    if (config.resources.length > 0 && options.registerSection === undefined) {
      throw new TypeError(
        `Cannot expose the resources of MCP server "${config.name}": no prompt section registry`,
      );
    }
    this.#options = options;
    this.#connection = new McpConnection({
      server: config.name,
      open: options.open,
      callTimeoutMs: config.timeout_ms,
      connectTimeoutMs: config.connect_timeout_ms,
      restart: { initialMs: config.restart.initial_ms, maxMs: config.restart.max_ms },
      logger,
      ...(options.random === undefined ? {} : { random: options.random }),
      onConnected: () => this.#refresh(),
      onToolsChanged: () => void this.refreshTools().catch(() => {}),
      onResourceUpdated: (uri) => {
        if (this.#resources.has(uri)) void this.#resources.refresh(uri).catch(() => {});
      },
      onState: (state, detail) => this.#state(state, detail.reason, detail.retryInMs),
    });
    this.#roster = new ToolRoster({
      server: config.name,
      defaults: {
        approval: config.approval,
        mutating: config.mutating,
        concurrency: config.concurrency,
      },
      overrides: config.tools,
      trustAnnotations: config.trust_annotations,
      register: options.registerTool,
      call: (tool, args, callOptions) => this.#call(tool, args, callOptions.signal),
      logger,
    });
    this.#resources = new ResourceSections(config.name, config.resources, this.#connection, logger);
  }

  /** The server connection. */
  get connection(): McpConnection {
    return this.#connection;
  }

  /** The registered tool names, sorted. */
  toolNames(): string[] {
    return this.#roster.names();
  }

  /** The rendered text of an exposed resource ("" until read). */
  resourceText(uri: string): string {
    return this.#resources.text(uri);
  }

  /** Connects and registers the server's tools (see the class contract). */
  async start(): Promise<void> {
    if (this.#options.registerSection !== undefined) {
      this.#resources.register(this.#options.registerSection);
    }
    this.#strict = true;
    try {
      await this.#connection.start();
    } catch (error) {
      const reachable = !(error instanceof TerretError) || !error.code.startsWith("Mcp");
      if (reachable || this.#options.config.required) throw error;
      this.#options.logger.log("warn", `${error.message}; retrying in the background`);
      this.#connection.startInBackground(error);
    } finally {
      this.#strict = false;
    }
  }

  /** Re-lists the tools and reconciles the roster; concurrent calls coalesce. */
  refreshTools(): Promise<void> {
    if (this.#refreshing !== undefined) {
      this.#dirty = true;
      return this.#refreshing;
    }
    this.#refreshing = (async () => {
      try {
        do {
          this.#dirty = false;
          const tools = await this.#connection.listTools();
          if (this.#closed) return;
          const report = await this.#roster.reconcile(tools, this.#strict);
          this.#options.onReconciled?.({ server: this.#options.config.name, ...report });
        } while (this.#dirty && !this.#closed);
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** Unregisters every tool and section and shuts the server down. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#connection.close();
    await this.#refreshing?.catch(() => {});
    await this.#roster.clear();
    await this.#resources.close();
  }

  async #refresh(): Promise<void> {
    const first = this.#strict;
    const [tools, resources] = await Promise.allSettled([
      this.refreshTools(),
      this.#resources.refreshAll(),
    ]);
    for (const outcome of [tools, resources]) {
      if (outcome.status === "rejected") {
        // The listing at start decides whether the row starts; later failures are logged.
        if (first && outcome === tools) throw outcome.reason;
        this.#options.logger.log(
          "warn",
          `Cannot refresh MCP server "${this.#options.config.name}"`,
          {
            error: outcome.reason,
          },
        );
      }
    }
  }

  async #call(
    tool: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal | undefined,
  ): Promise<ToolOutcome> {
    const label = `"${tool}" of MCP server "${this.#options.config.name}"`;
    try {
      const result = await this.#connection.callTool(tool, args, signal ? { signal } : {});
      return toToolOutcome(
        result as Parameters<typeof toToolOutcome>[0],
        label,
        this.#roster.outputCheck(tool),
      );
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      if (error instanceof TerretError) return { content: error.message, is_error: true };
      throw error;
    }
  }

  #state(
    state: McpConnectionState,
    reason: string | undefined,
    retryInMs: number | undefined,
  ): void {
    if (state === "connecting") return;
    this.#options.onState?.({
      server: this.#options.config.name,
      state,
      ...(reason === undefined ? {} : { reason }),
      ...(retryInMs === undefined ? {} : { retry_in_ms: retryInMs }),
    });
    const level = state === "unavailable" ? "warn" : "info";
    this.#options.logger.log(level, `MCP server "${this.#options.config.name}" is ${state}`, {
      ...(reason === undefined ? {} : { reason }),
      ...(retryInMs === undefined ? {} : { retry_in_ms: retryInMs }),
    });
  }
}
