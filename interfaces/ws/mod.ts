/**
 * Terret's WebSocket event stream (socket protocol v1, docs/protocol.md): one connection per long-lived agent,
 * every durable event of its session log replayed and tailed with no gap and no duplicate, and a closed set of
 * client frames that steer it. Mounted by the `interfaces.ws` row (plugin `terret-ws`, {@linkcode WsInterface}),
 * which injects `sessions` and `agents`; {@linkcode WsServer} is the server itself, over any
 * {@linkcode AgentGateway}.
 *
 * @example
 * ```ts ignore
 * import { createContext, Loader } from "@terret/hames";
 * import { AgentLoop, AgentRegistry, memoryStorePlugin, sessionsPlugin } from "@terret/core";
 * import { WsInterface, WsServiceKey } from "@terret/ws";
 *
 * await using ctx = createContext();
 * await new Loader(ctx).load([
 *   { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
 *   { id: "sessions", plugin: sessionsPlugin, config: {} },
 *   { id: "agents", plugin: AgentRegistry, config: {} },
 *   { id: "loop", plugin: AgentLoop, config: {} },
 *   {
 *     id: "interfaces.ws",
 *     plugin: WsInterface,
 *     config: { tokens: [{ token: "a-long-secret-token-123", agents: ["*"] }] },
 *   },
 * ]);
 * console.log(ctx.get(WsServiceKey).url); // ws://127.0.0.1:7878
 * ```
 *
 * @module
 */
export { WS_ERROR_CODES, WS_ERRORS, type WsErrorCode } from "./errors.ts";
export {
  type AgentFigures,
  type AgentGateway,
  type AgentLink,
  agentsGateway,
  type AgentState,
  type GatewayOpenOptions,
  type GatewaySignal,
  type LinkAnswer,
  type MessageOptions,
  type SteerOptions,
} from "./agent_gateway.ts";
export {
  type AgentDetail,
  type AgentPage,
  type AgentSummary,
  describeAgent,
  describeAgentDetail,
  listAgents,
  MAX_PAGE,
} from "./agent_directory.ts";
export { currentPlan, type PlanItem } from "./agent_plan.ts";
export {
  DENO_MAX_FRAME_BYTES,
  TOKEN_PATTERN,
  tokenFilePath,
  type TokenGrant,
  type WsConfig,
  wsConfig,
  type WsConfigInput,
} from "./config.ts";
export {
  CLIENT_FRAME_TYPES,
  type ClientFrame,
  type ErrorCode,
  type FrameRef,
  type FrameRefusal,
  isRefusal,
  MAX_PATTERN_LENGTH,
  MAX_POLICY_PATTERNS,
  MAX_REASON_LENGTH,
  MAX_REF_LENGTH,
  parseClientFrame,
} from "./client_frames.ts";
export { type Presented, presentedToken, SUBPROTOCOL, TokenGate } from "./auth.ts";
export { AGENT_ID_PATTERN } from "./routes.ts";
export { CLOSE, PROTOCOL_VERSION } from "./connection.ts";
export { tokenId } from "./_client_verbs.ts";
export { WsServer, type WsServerOptions, type WsStats } from "./ws_server.ts";
export { WsInterface, type WsService, WsServiceKey } from "./ws_plugin.ts";
export {
  generateToken,
  loadOrCreateToken,
  type ResolvedTokens,
  resolveTokens,
  type StoredToken,
  type TokenReport,
} from "./token_file.ts";
