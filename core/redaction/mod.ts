/**
 * Redaction and credentials: the redactor, the `redaction` plugin that scrubs what enters the session log, and the `credentials` plugin.
 *
 * Import from `@terret/core/redaction`.
 *
 * @module
 */
export {
  checkToken,
  DEFAULT_REDACTION_TOKEN,
  isRedacted,
  MAX_TOKEN_LENGTH,
  Redactor,
  type RedactorOptions,
  tokenIsToolName,
} from "./redactor.ts";
export {
  DEFAULT_REDACTION_PATTERNS,
  type Redaction,
  type RedactionConfig,
  redactionConfig,
  RedactionKey,
  redactionPlugin,
  redactionToken,
} from "./redaction_plugin.ts";
export {
  type Credentials,
  type CredentialsConfig,
  credentialsConfig,
  CredentialsKey,
  type CredentialSource,
  credentialsPlugin,
  credentialStorePath,
} from "./credentials.ts";
export { CREDENTIALS_KEY_ENV, CredentialStore } from "./credential_store.ts";
export {
  isSecretKeyName,
  isSecretSchema,
  SECRET_META,
  secretField,
  type SecretValue,
  secretValues,
} from "./secret_fields.ts";
export {
  literalPrefix,
  MIN_MARKER_LENGTH,
  safePrefixLength,
  type SafePrefixRules,
} from "./safe_prefix.ts";
