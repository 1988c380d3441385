/**
 * Core's error codes.
 *
 * @module
 */
import {
  defineErrorCodes,
  type ErrorCodes,
  HAMES_ERRORS,
  type HamesErrorCode,
  TerretError as BaseTerretError,
  type TerretErrorConstructor,
} from "@terret/hames";

/** The codes core throws, each with the condition it names (rendered into `docs/errors.md`). */
export const CORE_ERROR_CODES = {
  AgentBusy:
    "An agent cannot be disposed while a turn runs and the caller did not ask to cancel it",
  AgentDisposed: "An operation reached an agent that is already disposed",
  AgentExists: "An agent with the id is already live",
  AgentIdle: "A turn outcome was reported for an agent that has no open turn",
  AgentNotFound: "No live agent has the id",
  AgentShutdown:
    "The abort reason of a turn stopped because the agents service stops (the turn stays open)",
  AgentsBusy:
    "Every resident agent is busy, so no agent can be evicted to make room for another (retryable)",
  AgentsStopped: "The agents service is stopping or stopped and takes no new agents",
  AlreadyResolved: "An approval request already has a verdict (the first answer won)",
  CannotRemember:
    "No permission rule can be derived safely from the call an answer asked to remember",
  CassetteInvalid: "A cassette file is not a well-formed cassette",
  CassetteMismatch: "A replayed model request differs from the recorded one",
  CompactionFailed:
    "A session could not be compacted (its summary call failed or returned nothing)",
  CredentialsKeyInvalid: "TERRET_CREDENTIALS_KEY is not a base64 encoding of 32 bytes",
  CredentialsLocked:
    "The credential store exists but TERRET_CREDENTIALS_KEY is not set, so it is not read",
  CredentialsStoreInvalid:
    "The credential store cannot be decrypted with the key, or is not a credential store",
  InstructionsUnreadable: "The file a prompt row names as its system prompt cannot be read",
  InvalidAgentId: "An agent id does not match the session id pattern",
  InvalidBoundary: "A fork boundary is outside the source session or splits a turn",
  InvalidDecision: "An approval answer's decision is neither allow nor deny",
  InvalidPayload: "An event payload is not JSON, not valid UTF-8, or breaks its type's schema",
  InvalidRule: "A permission rule is malformed",
  InvalidSessionId: "A session id does not match the session id pattern",
  LlmMissing: "A model request was made with no model registry mounted",
  LlmRoleTaken: "A model adapter is already registered for the role",
  LogInvariantViolation:
    "The messages sent to a model differ from those derived from the session log",
  McpError: "An MCP server answered a request with an error",
  McpProtocol: "An MCP server broke the protocol",
  McpTimeout: "An MCP server did not answer within the timeout",
  McpUnavailable: "An MCP server cannot be reached or its connection closed",
  PayloadTooLarge: "An event payload is over the size cap",
  PromptSectionFailed: "A prompt section's render function threw",
  PromptUnstable: "A prompt section rendered different text for the same input",
  ReservedEventType: "An append used an event type only the harness may write",
  SectionExists: "A prompt section with the id is already registered",
  SessionExists: "A session with the id already exists",
  SessionInUse: "A live agent already drives the session",
  SessionNotFound: "No session has the id",
  StaleFencingToken:
    "An append carried an agent lease's fencing token older than the current one: another node acquired the lease",
  StoreClosed: "A session store was used after it was closed",
  StoreCorrupt: "A session store's data cannot be read back as events",
  StoreFailed: "A session store failed to read or write",
  StoreLocked: "Another process holds the session store's lock",
  StoreSchemaNewer:
    "A session store's schema is a newer version than this Terret knows (upgrade Terret, never downgrade the schema)",
  ToolExists: "A tool with the name is already registered",
  ToolNameClash: "Two MCP tools sanitise to the same registered name",
  TurnCancelled: "The abort reason of a turn cancelled by `agent.cancel`",
  UnknownEventType: "An append used an event type no plugin registered",
  UnknownRequest: "An approval answer names a request the session does not hold",
  UtilityCallFailed: "A utility model call (a summary or a title) failed or returned no text",
} as const;

/** A code core throws, or one of the kernel's. */
export type CoreErrorCode = keyof typeof CORE_ERROR_CODES | HamesErrorCode;

/** Core's error code table; its guard also accepts the kernel's codes. */
export const CORE_ERRORS: ErrorCodes<keyof typeof CORE_ERROR_CODES, CoreErrorCode> =
  defineErrorCodes("@terret/core", CORE_ERROR_CODES, [HAMES_ERRORS]);

/**
 * `TerretError` for this package's own throw sites: the same constructor, its code checked against
 * {@linkcode CoreErrorCode}.
 */
export const TerretError: TerretErrorConstructor<CoreErrorCode> = BaseTerretError;
/** A `TerretError` (the type of the binding above). */
export type TerretError<C extends string = string> = BaseTerretError<C>;
