/**
 * Test helpers for the ACP server: the SDK's client joined to `serveAcp` by two NDJSON byte pipes, with every
 * `session/update` recorded, and the reductions the sequences pin.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { type AcpServerOptions, serveAcp } from "@terret/acp";
import { fileURLToPath } from "node:url";

/** A client connected to an in-process server. */
export interface AcpPair {
  readonly server: acp.AgentConnection;
  readonly connection: acp.ClientConnection;
  readonly agent: acp.ClientContext;
  /** Every update received, in order. */
  readonly updates: { sessionId: string; update: acp.SessionUpdate }[];
}

/** Client-side handlers beyond `session/update` (permission, fs, terminal). */
export type ClientSetup = (app: acp.ClientApp) => acp.ClientApp;

/** Serves `options` and connects the SDK's client to it. */
export function connectPair(options: AcpServerOptions, setup: ClientSetup = (app) => app): AcpPair {
  const up = new TransformStream<Uint8Array, Uint8Array>();
  const down = new TransformStream<Uint8Array, Uint8Array>();
  const server = serveAcp(acp.ndJsonStream(down.writable, up.readable), options);
  const updates: { sessionId: string; update: acp.SessionUpdate }[] = [];
  const app = setup(
    acp.client({ name: "test-client" }).onNotification(
      acp.methods.client.session.update,
      ({ params }) => {
        updates.push({ sessionId: params.sessionId, update: params.update });
      },
    ),
  );
  const connection = app.connect(acp.ndJsonStream(up.writable, down.readable));
  return { server, connection, agent: connection.agent, updates };
}

/** An update reduced to what a sequence pins: its kind and its text, status or mode. */
export function brief(update: acp.SessionUpdate): string {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
    case "agent_message_chunk":
    case "agent_thought_chunk":
      return `${update.sessionUpdate} ${update.content.type === "text" ? update.content.text : ""}`;
    case "tool_call":
      return `tool_call ${update.toolCallId} ${update.kind} ${update.status}`;
    case "tool_call_update":
      return `tool_call_update ${update.toolCallId} ${update.status}`;
    case "current_mode_update":
      return `current_mode_update ${update.currentModeId}`;
    case "plan":
      return `plan ${update.entries.map((entry) => `${entry.status}:${entry.content}`).join(", ")}`;
    default:
      return update.sessionUpdate;
  }
}

/** `initialize` with the given client capabilities (default: none). */
export async function initialize(
  agent: acp.ClientContext,
  clientCapabilities: acp.ClientCapabilities = {},
): Promise<acp.InitializeResponse> {
  return await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "test-client", version: "0.0.1" },
  });
}

/** `session/new` in `cwd` with no MCP servers; resolves with the new session's id. */
export async function newSession(agent: acp.ClientContext, cwd: string): Promise<string> {
  const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  return sessionId;
}

/** Waits until `condition` holds, polling each macrotask; fails after 10 s. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MAIN = fileURLToPath(new URL("../interfaces/cli/main.ts", import.meta.url));

/** A running `trt acp` whose stdout is split: every line is parsed and kept, and the bytes go on to the client. */
export function spawnAcp(home: string, patch: string): {
  child: Deno.ChildProcess;
  lines: unknown[];
  bad: string[];
  checked: Promise<void>;
  stderr: Promise<string>;
  stream: acp.Stream;
} {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "acp", "--home", home, "--patch", patch],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: unknown[] = [];
  const bad: string[] = [];
  const [forClient, forCheck] = child.stdout.tee();
  const checked = (async () => {
    let rest = "";
    for await (const text of forCheck.pipeThrough(new TextDecoderStream())) {
      rest += text;
      let newline: number;
      while ((newline = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, newline);
        rest = rest.slice(newline + 1);
        try {
          const message = JSON.parse(line);
          if (message?.jsonrpc !== "2.0") bad.push(line);
          lines.push(message);
        } catch {
          bad.push(line);
        }
      }
    }
    if (rest !== "") bad.push(rest);
  })();
  const stderr = new Response(child.stderr).text();
  return { child, lines, bad, checked, stderr, stream: acp.ndJsonStream(child.stdin, forClient) };
}
