/**
 * The default driver: `AgentLoop`, its config, and the loop's extension points (`agent/request`, `agent/pre_step`, `agent/turn_stopping`).
 *
 * Import from `@terret/core/loop`.
 *
 * @module
 */
export {
  AgentPreStep,
  AgentRequest,
  type AgentRequestPayload,
  AgentTurnStopping,
  type InputItem,
  LOOP_EVENTS,
  type PreStepPayload,
  type PreStepResult,
  type TurnStatus,
  type TurnStoppingPayload,
  type TurnStoppingResult,
} from "./events.ts";
export { AgentLoop, type LoopConfig, loopConfig } from "./loop.ts";
export { carriesMarker } from "./redaction.ts";
