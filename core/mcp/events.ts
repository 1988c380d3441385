/**
 * Live events of the MCP client: a server's connection state and each reconciliation of its tools.
 *
 * @module
 */
import { defineEvent, type EventDefinition } from "@terret/hames";
import { z } from "zod";

/** Payload of {@linkcode McpServerState}. */
export interface McpServerStatePayload {
  readonly server: string;
  /** `ready`, `unavailable` (lost; restarting), `idle` (reset after a timeout; reconnects on next use), `stopped`. */
  readonly state: "ready" | "unavailable" | "idle" | "stopped";
  /** Why the server was lost or reset. */
  readonly reason?: string | undefined;
  /** Milliseconds until the next restart attempt (`unavailable`). */
  readonly retry_in_ms?: number | undefined;
}

/** Payload of {@linkcode McpToolsReconciled}. */
export interface McpToolsReconciledPayload {
  readonly server: string;
  /** Registered names, each list sorted. */
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
  /** Server tool names left unregistered because they sanitise to one name, sorted. */
  readonly clashes: readonly string[];
  /** Server tool names left unregistered because they require task-based execution, sorted. */
  readonly skipped: readonly string[];
  /** Server tool names the registry refused (e.g. a name another source holds), sorted. */
  readonly refused: readonly string[];
}

/** An MCP server's connection changed state. */
export const McpServerState: EventDefinition<"emit", McpServerStatePayload, void> = defineEvent(
  "mcp/server_state",
  {
    mode: "emit",
    owner: "@terret/core",
    description:
      "An MCP server became ready, was lost (restarting with backoff), was reset after a timeout, or stopped.",
    payload: z.object({
      server: z.string(),
      state: z.enum(["ready", "unavailable", "idle", "stopped"]),
      reason: z.string().optional(),
      retry_in_ms: z.number().int().min(0).optional(),
    }),
  },
);

/** An MCP server's tools were listed and the registered roster brought in line with them. */
export const McpToolsReconciled: EventDefinition<"emit", McpToolsReconciledPayload, void> =
  defineEvent("mcp/tools_reconciled", {
    mode: "emit",
    owner: "@terret/core",
    description:
      "An MCP server's tool list was reconciled into the registry (at connect and on tools/list_changed).",
    payload: z.object({
      server: z.string(),
      added: z.array(z.string()),
      removed: z.array(z.string()),
      changed: z.array(z.string()),
      clashes: z.array(z.string()),
      skipped: z.array(z.string()),
      refused: z.array(z.string()),
    }),
  });
