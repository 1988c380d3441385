/**
 * The config of one `mcp.<server>` row: how to reach the server and how its tools are governed.
 *
 * @module
 */
import { z } from "zod";
import { secretField } from "../redaction/secret_fields.ts";
import type { ToolApproval, ToolConcurrency } from "../tools/tool.ts";
import type { SandboxGrants } from "../seams/sandbox.ts";
import { MCP_RUNTIME_ENV } from "./runtime_env.ts";

/** Policy metadata that can be set per tool, over the server's defaults. */
export interface McpToolOverride {
  readonly approval?: ToolApproval;
  readonly mutating?: boolean;
  readonly concurrency?: ToolConcurrency;
}

/** A server spawned through the sandbox, speaking JSON-RPC on its stdin/stdout. */
export interface McpStdioTarget {
  readonly transport: "stdio";
  /** The program (resolved on the `PATH` the subprocess row passes on, or an absolute path). */
  readonly command: string;
  readonly args: readonly string[];
  /** The working directory; default: the first granted workspace directory. */
  readonly cwd?: string;
  /**
   * Host variables the server inherits (when set on the host) beyond the subprocess row's base environment;
   * default {@linkcode MCP_RUNTIME_ENV} (cache, CAs, registry and proxy, never a URL with credentials).
   */
  readonly inherit_env: readonly string[];
  /** Fixed variables the server gets on top (they win over inherited ones); no ambient secrets. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The sandbox provider this server runs under, overriding the sandbox row's: `deno` (permissions derived from
   * the workspace, the row's `env` and `allow`), `bwrap`, or `none` (with `acknowledge_unconfined`). Absent: the
   * sandbox row's, like every program.
   */
  readonly sandbox?: McpSandboxProvider;
  /** Set to accept that `sandbox: none` runs the server unconfined on the host (required with it). */
  readonly acknowledge_unconfined?: boolean;
  /** What the row's own sandbox grants beyond the workspace (only with `sandbox: deno` or `bwrap`). */
  readonly allow?: SandboxGrants;
}

/** The providers a stdio row can name in `sandbox:`. */
export type McpSandboxProvider = "deno" | "bwrap" | "none";

/** A server reached over Streamable HTTP. */
export interface McpHttpTarget {
  readonly transport: "http";
  /** The MCP endpoint (`https://host/mcp`). */
  readonly url: string;
  /** Headers sent with every request (e.g. `Authorization`). */
  readonly headers: Readonly<Record<string, string>>;
}

/** Restart backoff for a server that died or cannot be reached. */
export interface McpRestartConfig {
  /** The first delay, in milliseconds. */
  readonly initial_ms: number;
  /** The largest delay, in milliseconds. */
  readonly max_ms: number;
}

/** The config of one `mcp.<server>` row (defaults applied). */
export type McpServerConfig = (McpStdioTarget | McpHttpTarget) & {
  /** The server name in tool names (`mcp__<name>__<tool>`) and messages. */
  readonly name: string;
  /** Approval for every tool of the server (default `policy`). */
  readonly approval: ToolApproval;
  /** Whether the server's tools change things (default true: unknown tools are assumed to). */
  readonly mutating: boolean;
  /** Whether the server's tools may run alongside others in one step (default `serial`). */
  readonly concurrency: ToolConcurrency;
  /** Per-tool overrides of `approval`, `mutating` and `concurrency`, keyed by the server's own tool name. */
  readonly tools: Readonly<Record<string, McpToolOverride>>;
  /** Take the server's `readOnlyHint` annotation as true (read-only tools become non-mutating and parallel). */
  readonly trust_annotations: boolean;
  /** Milliseconds a tool call (and a `tools/list`) may take before the connection is reset. */
  readonly timeout_ms: number;
  /** Milliseconds the connection handshake may take. */
  readonly connect_timeout_ms: number;
  /** Restart backoff (jittered, doubling from `initial_ms` up to `max_ms`). */
  readonly restart: McpRestartConfig;
  /** Whether the row fails to start when the server cannot be reached at boot (false: keep retrying). */
  readonly required: boolean;
  /** Resource URIs exposed as prompt sections (read at connect, re-read when the server says they changed). */
  readonly resources: readonly string[];
  /** Characters of the server's stderr kept for diagnostics (stdio). */
  readonly stderr_log_chars: number;
};

/** Server names: runs of letters and digits joined by single `-` or `_` (so `mcp__<name>__<tool>` parses one way). */
export const SERVER_NAME_PATTERN: RegExp = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;

const approval = z.enum(["never", "policy", "always"]);
const concurrency = z.enum(["parallel", "serial"]);

const common = {
  name: z.string().max(32).regex(SERVER_NAME_PATTERN, {
    message: "expected runs of letters and digits joined by single `-` or `_`",
  }).describe(
    "The server name used in tool names (`mcp__<name>__<tool>`)",
  ),
  approval: approval.default("policy").describe("Approval for every tool of the server"),
  mutating: z.boolean().default(true).describe(
    "Whether the server's tools change things (unknown tools are assumed to)",
  ),
  concurrency: concurrency.default("serial").describe(
    "Whether the server's tools may run alongside others in one step",
  ),
  tools: z.record(
    z.string(),
    z.strictObject({
      approval: approval.optional(),
      mutating: z.boolean().optional(),
      concurrency: concurrency.optional(),
    }),
  ).default({}).describe("Per-tool overrides of approval, mutating and concurrency"),
  trust_annotations: z.boolean().default(false).describe(
    "Take the server's readOnlyHint as true (read-only tools become non-mutating and parallel)",
  ),
  timeout_ms: z.number().int().positive().default(60_000).describe(
    "Milliseconds a tool call may take before the connection is reset",
  ),
  connect_timeout_ms: z.number().int().positive().default(30_000).describe(
    "Milliseconds the handshake may take",
  ),
  restart: z.strictObject({
    initial_ms: z.number().int().positive().default(500),
    max_ms: z.number().int().positive().default(30_000),
  }).default({ initial_ms: 500, max_ms: 30_000 }).describe(
    "Jittered restart backoff for a server that died or cannot be reached",
  ),
  required: z.boolean().default(true).describe(
    "Fail the row when the server cannot be reached at boot (false: keep retrying in the background)",
  ),
  resources: z.array(z.string().min(1)).default([]).describe(
    "Resource URIs exposed as prompt sections",
  ),
  stderr_log_chars: z.number().int().min(0).default(16 * 1024).describe(
    "Characters of a stdio server's stderr kept for diagnostics",
  ),
};

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const grantPath = z.string().refine((path) => path.startsWith("/") && !path.includes(","), {
  message: "must be an absolute path without a comma",
});
const grantName = z.string().regex(/^[^,\s]+$/, { message: "must be one name, without a comma" });

/** The `allow` block of a stdio row: grants of its own sandbox beyond the workspace. */
const allowSchema = z.strictObject({
  read: z.array(grantPath).default([]).describe("Absolute paths readable beyond the workspace"),
  write: z.array(grantPath).default([]).describe(
    "Absolute paths writable (and readable) beyond the workspace",
  ),
  net: z.array(grantName).default([]).describe(
    "Hosts (`host` or `host:port`) the server may reach",
  ),
  env: z.array(envName).default([]).describe(
    "Variables the server may read beyond the names in its env (which it may always read)",
  ),
  sys: z.array(grantName).default([]).describe("System information APIs (`hostname`, …)"),
});

/** The zod schema of an `mcp.<server>` row's config. */
export const mcpServerConfig: z.ZodType<McpServerConfig, unknown> = z.discriminatedUnion(
  "transport",
  [
    z.strictObject({
      ...common,
      transport: z.literal("stdio"),
      command: z.string().min(1).describe("The program to spawn (through the sandbox)"),
      args: z.array(z.string()).default([]).describe("Its arguments"),
      cwd: z.string().refine((path) => path.startsWith("/"), { message: "must be absolute" })
        .optional().describe("Working directory (default: the first workspace directory)"),
      inherit_env: z.array(envName).default([...MCP_RUNTIME_ENV]).describe(
        "Host variables the server inherits beyond the subprocess row's base environment (default: Deno's " +
          "cache, CA and proxy variables and the npm registry; a URL with credentials is never inherited)",
      ),
      env: secretField(z.record(envName, z.string())).default({}).describe(
        "Fixed variables the server gets on top of the inherited ones (secret: every value is redacted from " +
          "tool results and the log, and masked by dump-config)",
      ),
      sandbox: z.enum(["deno", "bwrap", "none"]).optional().describe(
        "The server's own sandbox, overriding the sandbox row's: deno (permissions derived from the workspace, " +
          "env and allow), bwrap, or none (needs acknowledge_unconfined); default: the sandbox row's",
      ),
      acknowledge_unconfined: z.boolean().default(false).describe(
        "Accept that sandbox: none runs the server unconfined on the host (required with it)",
      ),
      allow: allowSchema.default({ read: [], write: [], net: [], env: [], sys: [] }).describe(
        "What the server's own sandbox grants beyond the workspace (only with sandbox: deno or bwrap)",
      ),
    }),
    z.strictObject({
      ...common,
      transport: z.literal("http"),
      url: z.url({ protocol: /^https?$/ }).describe("The Streamable HTTP endpoint"),
      headers: secretField(z.record(z.string(), z.string())).default({}).describe(
        "Headers sent with every request (secret: every value is redacted from tool results and the log, and " +
          "masked by dump-config)",
      ),
    }),
  ],
).superRefine((config, issue) => {
  if (config.restart.max_ms < config.restart.initial_ms) {
    issue.addIssue({
      code: "custom",
      path: ["restart", "max_ms"],
      message: "must not be below initial_ms",
    });
  }
  if (config.transport !== "stdio") return;
  if (config.sandbox === "none" && !config.acknowledge_unconfined) {
    issue.addIssue({
      code: "custom",
      path: ["sandbox"],
      message:
        "none runs the server unconfined on the host; set acknowledge_unconfined: true to accept that",
    });
  }
  if (config.sandbox !== "none" && config.acknowledge_unconfined === true) {
    issue.addIssue({
      code: "custom",
      path: ["acknowledge_unconfined"],
      message: "applies to sandbox: none only",
    });
  }
  const allow = config.allow ?? {};
  const granted = Object.entries(allow).filter(([, list]) => list.length > 0);
  if (granted.length > 0 && (config.sandbox === undefined || config.sandbox === "none")) {
    issue.addIssue({
      code: "custom",
      path: ["allow"],
      message: `grants ${
        granted.map(([kind]) => kind).join(", ")
      } of the row's own sandbox; set sandbox: deno or bwrap (the sandbox row's grants are its own)`,
    });
  }
}) as unknown as z.ZodType<McpServerConfig, unknown>;
