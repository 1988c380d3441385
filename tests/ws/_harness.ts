/**
 * A socket server for the protocol tests: a real `WsServer` on 127.0.0.1:0 over a real session log (SQLite in a
 * temporary directory), with a recording agent gateway standing in for the agents service where a test is about
 * the socket rather than about turns (the socket only ever sees the log, so a test writes the log directly to
 * play a busy agent).
 *
 * @module
 */
import {
  type Context,
  createContext,
  createMemoryLogger,
  type MemoryLogger,
  type TerretError,
} from "@terret/hames";
import { type AppendInput, type Content, SqliteSessionStore } from "@terret/core/sessions";
import { type SessionEvent, SessionLog } from "@terret/core";
import {
  type AgentFigures,
  type AgentGateway,
  type AgentLink,
  type AgentState,
  wsConfig,
  type WsConfigInput,
  WsServer,
} from "@terret/ws";
import { type OpenOptions, WsClient } from "./_clients.ts";

/** A token granted every agent. */
export const TOKEN = "test-token-all-agents-0123456789";
/** A token granted only `orch-7.*`. */
export const ORCH_TOKEN = "test-token-orch-seven-0123456789";

/** One call the socket made on the gateway. */
export type GatewayCall =
  | { readonly verb: "open"; readonly agent_id: string }
  | { readonly verb: "message"; readonly agent_id: string; readonly content: Content }
  | {
    readonly verb: "steer";
    readonly agent_id: string;
    readonly content: Content;
    readonly wake: boolean;
  }
  | { readonly verb: "cancel"; readonly agent_id: string; readonly reason: string | null }
  | { readonly verb: "dispose"; readonly agent_id: string };

/**
 * A gateway that records every call and keeps one session per agent (the session id is the agent id, created on
 * first contact). `refuseOpen`/`refuseMessages` make it refuse the way an agents service may.
 */
export class RecordingAgents implements AgentGateway {
  readonly calls: GatewayCall[] = [];
  refuseOpen: TerretError | undefined;
  refuseMessages: TerretError | undefined;
  readonly #sessions: SessionLog;

  constructor(sessions: SessionLog) {
    this.#sessions = sessions;
  }

  async open(agentId: string): Promise<AgentLink> {
    this.calls.push({ verb: "open", agent_id: agentId });
    if (this.refuseOpen !== undefined) throw this.refuseOpen;
    if (await this.#sessions.head(agentId) === 0) {
      await this.#sessions.create({ session_id: agentId, meta: { agent_id: agentId } });
    }
    const calls = this.calls;
    const refuse = (): void => {
      if (this.refuseMessages !== undefined) throw this.refuseMessages;
    };
    return {
      agentId,
      sessionId: agentId,
      message(content) {
        refuse();
        calls.push({ verb: "message", agent_id: agentId, content });
        return Promise.resolve();
      },
      steer(content, { wake }) {
        refuse();
        calls.push({ verb: "steer", agent_id: agentId, content, wake });
        return Promise.resolve();
      },
      cancel(reason) {
        calls.push({ verb: "cancel", agent_id: agentId, reason: reason ?? null });
        return Promise.resolve();
      },
      ready() {
        return Promise.resolve();
      },
      dispose() {
        calls.push({ verb: "dispose", agent_id: agentId });
        return Promise.resolve();
      },
    };
  }

  state(): AgentState {
    return { status: "idle", resident: false };
  }

  figures(): AgentFigures {
    return { resident: 0, busy: 0, max: 128 };
  }
}

/** Options for {@linkcode startHarness}. */
export interface HarnessOptions {
  /** The clock the rate limiter reads (default: the real one). */
  readonly now?: () => number;
}

/** A running socket server and what it stands on. */
export interface Harness extends AsyncDisposable {
  /** The context the server was given (services a test provides on it are what the server looks up). */
  readonly ctx: Context;
  readonly server: WsServer;
  readonly sessions: SessionLog;
  readonly agents: RecordingAgents;
  readonly logger: MemoryLogger;
  readonly port: number;
  /** `ws://127.0.0.1:<port>/v1/agents/<id>/stream`. */
  url(agentId: string): string;
  /** Connects with {@linkcode TOKEN} (or the options given) and reads the `hello`. */
  connect(
    agentId: string,
    options?: OpenOptions,
  ): Promise<{ client: WsClient; hello: Record<string, unknown> }>;
  /** Creates an agent's session as the gateway would on first contact. */
  create(agentId: string): Promise<SessionEvent>;
  /** Appends events to an agent's session as a busy agent would. */
  append(agentId: string, ...inputs: AppendInput[]): Promise<SessionEvent[]>;
  /** Stops the server, then the log and the store, then removes the directory. */
  dispose(): Promise<void>;
}

/** The tokens every harness grants. */
export const TOKENS = [
  { token: TOKEN, agents: ["*"] },
  { token: ORCH_TOKEN, agents: ["orch-7.*"] },
];

/** Starts a server with `config` over a fresh SQLite store. */
export async function startHarness(
  config: Partial<WsConfigInput> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "terret-ws-" });
  const store = SqliteSessionStore.open({ path: `${dir}/sessions.db` });
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "test", logger });
  const sessions = new SessionLog(ctx, store);
  const agents = new RecordingAgents(sessions);
  const server = await WsServer.start({
    ctx,
    sessions,
    agents,
    config: wsConfig.parse({ port: 0, tokens: TOKENS, ...config }),
    logger,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const port = server.port;
  const url = (agentId: string): string => `ws://127.0.0.1:${port}/v1/agents/${agentId}/stream`;
  let disposed = false;
  const dispose = async (): Promise<void> => {
    if (disposed) return;
    disposed = true;
    await server.close();
    await ctx.dispose();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  };
  return {
    ctx,
    server,
    sessions,
    agents,
    logger,
    port,
    url,
    async connect(agentId, open = { token: TOKEN }) {
      const client = await WsClient.open(url(agentId), open);
      const hello = await client.next();
      return { client, hello };
    },
    create(agentId) {
      return sessions.create({ session_id: agentId, meta: { agent_id: agentId } });
    },
    async append(agentId, ...inputs) {
      const out: SessionEvent[] = [];
      for (const input of inputs) out.push(await sessions.append(agentId, input));
      return out;
    },
    dispose,
    [Symbol.asyncDispose]: dispose,
  };
}

/** A text chunk event of `size` characters (what a streaming agent writes most). */
export function chunk(text: string): AppendInput {
  return { type: "assistant/chunk", payload: { kind: "text", text } };
}

/** The `event` frame a client receives for `event`, parsed (what the server must send, exactly as stored). */
export function eventFrame(event: SessionEvent): Record<string, unknown> {
  return JSON.parse(JSON.stringify({ type: "event", event }));
}
