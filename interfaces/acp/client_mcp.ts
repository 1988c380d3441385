/**
 * MCP servers the ACP client provides in `session/new` and `session/load`, mounted for that session only through
 * Terret's MCP client (`terret-mcp` rows on the session agent's own context).
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Fiber, Logger } from "@terret/hames";
import type { Agent } from "@terret/core";
import { mcpPlugin, type McpServerConfig, mcpServerConfig } from "@terret/core/mcp";

/** The MCP server name Terret uses for a client's server name: runs of letters and digits joined by `_`. */
export function mcpServerName(name: string): string {
  return name.split(/[^A-Za-z0-9]+/).filter((part) => part !== "").join("_").slice(0, 32)
    .replace(/_+$/, "");
}

/**
 * The `terret-mcp` configs of a client's `mcpServers` (stdio servers start in `cwd`).
 *
 * @throws {acp.RequestError} `-32602` naming the field (`mcpServers[i]…`) for an SSE server (not advertised), a
 *   name with no letter or digit, two servers under one name, or a config Terret's MCP client refuses
 */
export function mcpConfigs(servers: readonly acp.McpServer[], cwd: string): McpServerConfig[] {
  const configs: McpServerConfig[] = [];
  const seen = new Set<string>();
  servers.forEach((server, index) => {
    const field = `mcpServers[${index}]`;
    const refuse = (why: string, at = field): never => {
      throw new acp.RequestError(
        -32602,
        `Cannot mount MCP server "${server.name}": ${why}`,
        { field: at, name: server.name },
      );
    };
    const name = mcpServerName(server.name);
    if (name === "") refuse("its name has no letter or digit", `${field}.name`);
    if (seen.has(name)) {
      refuse(`another server of this session is named "${name}"`, `${field}.name`);
    }
    seen.add(name);
    let row: Record<string, unknown>;
    if ("type" in server && server.type === "sse") {
      return refuse("SSE servers are not supported (use stdio or http)", `${field}.type`);
    } else if ("type" in server && server.type === "http") {
      row = {
        name,
        transport: "http",
        url: server.url,
        headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])),
      };
    } else {
      const stdio = server as acp.McpServerStdio;
      row = {
        name,
        transport: "stdio",
        command: stdio.command,
        args: [...stdio.args],
        cwd,
        env: Object.fromEntries(stdio.env.map((variable) => [variable.name, variable.value])),
      };
    }
    const parsed = mcpServerConfig.safeParse(row);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      refuse(issue.message, [field, ...issue.path.map(String)].join("."));
    }
    configs.push(parsed.data as McpServerConfig);
  });
  return configs;
}

interface Mounted {
  readonly agent: Agent;
  readonly configs: readonly McpServerConfig[];
  readonly fibers: Fiber[];
}

/**
 * The client-provided MCP servers of one connection's sessions.
 *
 * Contract: a session's servers are `terret-mcp` plugins mounted on its agent's context, so their
 * `mcp__<server>__<tool>` tools are visible to that agent only, are governed by the allow list like any tool,
 * and die with the agent (an evicted agent's servers are mounted again on the agent that replaces it, before its
 * next prompt). `mount` resolves once every server's tools are registered; when one cannot start it unmounts what
 * it mounted and rejects with a `-32603` error naming the server. `release` stops a session's servers (their
 * processes are gone when it resolves).
 */
export class ClientMcpServers {
  readonly #mounted = new Map<string, Mounted>();
  readonly #logger: Logger | undefined;

  /** @param logger where failures to stop a server are reported */
  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** Mounts `configs` for the session `agent` drives, replacing what was mounted for it before. */
  async mount(agent: Agent, configs: readonly McpServerConfig[]): Promise<void> {
    await this.release(agent.session_id);
    if (configs.length === 0) return;
    const fibers: Fiber[] = [];
    try {
      for (const config of configs) {
        const fiber = agent.ctx.plugin(mcpPlugin, config, { id: `mcp.${config.name}` });
        fibers.push(fiber);
        await fiber.settled();
        if (fiber.state !== "active") {
          const why = fiber.state === "failed"
            ? String((fiber.error as Error)?.message ?? fiber.error)
            : `the profile provides no ${
              fiber.missing().map((key) => `"${key}"`).join(", ")
            } service`;
          throw new acp.RequestError(-32603, `Cannot mount MCP server "${config.name}": ${why}`, {
            name: config.name,
          });
        }
      }
    } catch (error) {
      await Promise.allSettled(fibers.map((fiber) => fiber.dispose()));
      throw error;
    }
    this.#mounted.set(agent.session_id, { agent, configs, fibers });
  }

  /** Mounts the session's servers again when `agent` is not the agent they were mounted on (after an eviction). */
  async ensure(agent: Agent): Promise<void> {
    const mounted = this.#mounted.get(agent.session_id);
    if (mounted === undefined || mounted.agent === agent) return;
    this.#mounted.delete(agent.session_id);
    await this.mount(agent, mounted.configs);
  }

  /** Stops the session's servers. */
  async release(sessionId: string): Promise<void> {
    const mounted = this.#mounted.get(sessionId);
    if (mounted === undefined) return;
    this.#mounted.delete(sessionId);
    const outcomes = await Promise.allSettled(mounted.fibers.map((fiber) => fiber.dispose()));
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") {
        this.#logger?.log("warn", "acp: a client MCP server did not stop cleanly", {
          session_id: sessionId,
          error: String(outcome.reason),
        });
      }
    }
  }

  /** The sessions with servers mounted. */
  sessions(): string[] {
    return [...this.#mounted.keys()];
  }
}
