/**
 * The `interfaces.ws` row's config: where to listen, who may connect to which agents, and every limit the socket
 * enforces (docs/protocol.md §8).
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { secretField } from "@terret/core/redaction";

/** Characters a token may hold: also valid in a subprotocol name, so a browser can send `bearer.<token>`. */
export const TOKEN_PATTERN: RegExp = /^[A-Za-z0-9._~+/=-]{16,512}$/;

/** One token and the agent ids it is granted. */
export interface TokenGrant {
  /** The secret a client presents. */
  readonly token: string;
  /** Case-sensitive `fnmatch` globs over agent ids (`*`, `orch-7.*`). */
  readonly agents: readonly string[];
}

/** The socket's config, defaults applied. */
export interface WsConfig {
  readonly host: string;
  readonly port: number;
  readonly tokens: readonly TokenGrant[];
  readonly token_env?: string | undefined;
  readonly token_file?: string | undefined;
  readonly dir?: string | undefined;
  readonly heartbeat_seconds: number;
  readonly replay_limit: number;
  readonly max_concurrent_replays: number;
  readonly replay_budget_bytes: number;
  readonly queue_limit: number;
  readonly send_timeout_seconds: number;
  readonly max_frame_bytes: number;
  readonly frame_rate: number;
  readonly max_connections: number;
  readonly max_connections_per_token: number;
  readonly max_connections_per_agent: number;
  readonly max_agents_per_token: number;
  readonly agents_window_seconds: number;
  readonly console: boolean;
}

/** The config as a row may write it (everything defaulted). */
export interface WsConfigInput {
  readonly host?: string;
  readonly port?: number;
  readonly tokens?: readonly TokenGrant[];
  readonly token_env?: string;
  readonly token_file?: string;
  readonly dir?: string;
  readonly heartbeat_seconds?: number;
  readonly replay_limit?: number;
  readonly max_concurrent_replays?: number;
  readonly replay_budget_bytes?: number;
  readonly queue_limit?: number;
  readonly send_timeout_seconds?: number;
  readonly max_frame_bytes?: number;
  readonly frame_rate?: number;
  readonly max_connections?: number;
  readonly max_connections_per_token?: number;
  readonly max_connections_per_agent?: number;
  readonly max_agents_per_token?: number;
  readonly agents_window_seconds?: number;
  readonly console?: boolean;
}

/** The largest frame Deno's WebSocket accepts at all; `max_frame_bytes` may not exceed it. */
export const DENO_MAX_FRAME_BYTES = 64 * 1024 * 1024;

const schema: z.ZodType<WsConfig, WsConfigInput> = z.strictObject({
  host: z.string().min(1).default("127.0.0.1").describe(
    "Listen address; 127.0.0.1 unless the row says otherwise (0.0.0.0 exposes every agent's stream to the network)",
  ),
  port: z.number().int().min(0).max(65535).default(7878).describe(
    "Listen port (0: any free port)",
  ),
  tokens: z.array(
    z.strictObject({
      token: secretField(
        z.string().regex(
          TOKEN_PATTERN,
          "a token is 16 to 512 characters from A-Z a-z 0-9 . _ ~ + / = -",
        ),
      ),
      agents: z.array(z.string().min(1).max(256)).min(1).describe(
        "Case-sensitive fnmatch globs over agent ids this token may connect to (* for all)",
      ),
    }),
  ).default([]).describe("Bearer tokens and the agent ids each may reach"),
  token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional().describe(
    "An environment variable read when the row mounts: when set, its value is a token granted every agent " +
      "(the base bundle names TERRET_TOKEN)",
  ),
  token_file: z.string().min(1).optional().describe(
    "When neither tokens nor token_env give a token: the file holding one, granted every agent; created with a " +
      "fresh token (mode 0600) when missing, relative to dir when given (the base bundle: ws/token under the " +
      "Terret home). trt serve prints a token it creates, once",
  ),
  dir: z.string().min(1).optional().describe(
    "The directory a relative token_file is resolved against; the base bundle passes the Terret home " +
      "(!setting terret.home)",
  ),
  heartbeat_seconds: z.number().int().min(0).max(3600).default(30).describe(
    "Ping interval and pong deadline (Deno's idleTimeout); 0 disables; applies to new connections",
  ),
  replay_limit: z.number().int().min(1).default(10_000).describe(
    "Most events replayed per subscribe; an older from_seq gets replay_truncated",
  ),
  max_concurrent_replays: z.number().int().min(1).default(4).describe(
    "Replays taking turns at once across the server (one whose reader is not draining takes none); further " +
      "subscribes wait their turn",
  ),
  replay_budget_bytes: z.number().int().min(1024 * 1024).default(64 * 1024 * 1024).describe(
    "Bytes all replays may hold at once (their sockets' queues plus one store page each); a replay that would " +
      "pass it waits",
  ),
  queue_limit: z.number().int().min(1024).default(8 * 1024 * 1024).describe(
    "Bytes a connection may have queued (bufferedAmount) before it is sent lagged and closed with 4008",
  ),
  send_timeout_seconds: z.number().min(0.01).max(3600).default(30).describe(
    "A connection whose queued bytes make no progress for this long is dropped as lagged",
  ),
  max_frame_bytes: z.number().int().min(1024).max(DENO_MAX_FRAME_BYTES).default(1024 * 1024)
    .describe("Largest client frame in UTF-8 bytes; a larger one closes the connection with 1009"),
  frame_rate: z.number().int().min(1).default(100).describe(
    "Client frames per second per connection (burst of the same size); excess frames are dropped",
  ),
  max_connections: z.number().int().min(1).default(1024).describe(
    "Open connections across the server; a further upgrade gets 503",
  ),
  max_connections_per_token: z.number().int().min(1).default(256).describe(
    "Open connections (closing ones included) one token may hold; a further upgrade with it gets 429, so one " +
      "tenant cannot take every slot",
  ),
  max_connections_per_agent: z.number().int().min(1).default(8).describe(
    "Open connections (superseded ones still closing included) to one agent; a further upgrade gets 429",
  ),
  max_agents_per_token: z.number().int().min(1).default(1000).describe(
    "New agents (durable sessions) one token may create per agents_window_seconds; one more is refused with " +
      "the frame error quota_exceeded (retryable). Existing agents are not counted",
  ),
  agents_window_seconds: z.number().int().min(1).max(31_536_000).default(3600).describe(
    "The window max_agents_per_token counts in",
  ),
  console: z.boolean().default(false).describe(
    "Serve the web console (docs/console.md) on this listener at / and /console/: static assets under a strict " +
      "CSP; the page is one more protocol v1 client and asks for a token",
  ),
}) as unknown as z.ZodType<WsConfig, WsConfigInput>;

/** The `interfaces.ws` row's config schema. */
export const wsConfig: z.ZodType<WsConfig, WsConfigInput> = schema;

/** The token file a config names: `token_file` resolved against `dir` when it is relative, or `undefined`. */
export function tokenFilePath(config: Pick<WsConfig, "token_file" | "dir">): string | undefined {
  if (config.token_file === undefined) return undefined;
  if (config.dir === undefined || isAbsolute(config.token_file)) return config.token_file;
  return join(config.dir, config.token_file);
}
