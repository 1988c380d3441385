/**
 * The socket token `trt serve` generates when none is configured: 32 random bytes (base64url), stored in the
 * Terret home with mode 0600 and reused on later starts.
 *
 * @module
 */
import { TerretError } from "./errors.ts";
import { TOKEN_PATTERN, tokenFilePath, type TokenGrant, type WsConfig } from "./config.ts";

/** A fresh token: 32 random bytes, base64url without padding (43 characters). */
export function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replaceAll("=", "");
}

/** What {@linkcode loadOrCreateToken} found. */
export interface StoredToken {
  /** The token. */
  readonly token: string;
  /** True when the file did not exist and was created now (the only time the token should be printed). */
  readonly created: boolean;
  /** The file. */
  readonly path: string;
}

/**
 * Reads the token stored at `path`, or generates one and creates the file with mode 0600 (its directory too).
 * Two processes racing to create it agree on one token (the file is created exclusively).
 *
 * @throws {TerretError} `TokenFileExposed` when the file is readable or writable by anyone but its owner,
 *   `TokenFileInvalid` when it does not hold a valid token
 */
export async function loadOrCreateToken(path: string): Promise<StoredToken> {
  const token = generateToken();
  await Deno.mkdir(parentOf(path), { recursive: true, mode: 0o700 });
  // Written whole under a private name, then linked into place: the link is the exclusive create, so a reader
  // never sees a half-written file and two racing creators agree on the first one linked.
  const draft = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(draft, `${token}\n`, { createNew: true, mode: 0o600 });
  try {
    await Deno.chmod(draft, 0o600);
    await Deno.link(draft, path);
    return { token, created: true, path };
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  } finally {
    await Deno.remove(draft);
  }
  const info = await Deno.stat(path);
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new TerretError(
      "TokenFileExposed",
      `Cannot use the socket token in "${path}": its mode is ${
        (info.mode & 0o777).toString(8).padStart(3, "0")
      }, so others can read it (run: chmod 600 "${path}")`,
    );
  }
  const stored = (await Deno.readTextFile(path)).trim();
  if (!TOKEN_PATTERN.test(stored)) {
    throw new TerretError(
      "TokenFileInvalid",
      `Cannot use the socket token in "${path}": it must hold one token of 16 to 512 characters from ` +
        "A-Z a-z 0-9 . _ ~ + / = - (delete the file to have a new one generated)",
    );
  }
  return { token: stored, created: false, path };
}

function parentOf(path: string): string {
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}

/** Where the socket's tokens came from (what `trt serve` reports; the token itself only when just generated). */
export interface TokenReport {
  /** How many tokens the row lists under `tokens`. */
  readonly configured: number;
  /** The variable (`token_env`) that gave a token, if it was set. */
  readonly env: string | undefined;
  /** The token file used (when neither gave one). */
  readonly file: { readonly path: string; readonly created: boolean } | undefined;
  /** The token generated into the file at this start, to be shown once; `undefined` otherwise. */
  readonly generated: string | undefined;
}

/** The tokens a config grants, and where they came from. */
export interface ResolvedTokens {
  readonly grants: readonly TokenGrant[];
  readonly report: TokenReport;
}

/**
 * Resolves a config's tokens: the listed `tokens`, plus the value of `token_env` when that variable is set (granted
 * every agent); when neither gives one, the token in `token_file` (granted every agent), generated now when the file
 * does not exist.
 *
 * @throws {TerretError} `TokenInvalid` when the variable holds no valid token, `NoToken` when no source gives one,
 *   and the errors of {@linkcode loadOrCreateToken}
 */
export async function resolveTokens(
  config: Pick<WsConfig, "tokens" | "token_env" | "token_file" | "dir">,
  env: { get(name: string): string | undefined },
): Promise<ResolvedTokens> {
  const grants: TokenGrant[] = [...config.tokens];
  let fromEnv: string | undefined;
  if (config.token_env !== undefined) {
    const value = env.get(config.token_env);
    if (value !== undefined && value !== "") {
      if (!TOKEN_PATTERN.test(value)) {
        throw new TerretError(
          "TokenInvalid",
          `Cannot use $${config.token_env} as the socket token: a token is 16 to 512 characters from ` +
            "A-Z a-z 0-9 . _ ~ + / = -",
        );
      }
      grants.push({ token: value, agents: ["*"] });
      fromEnv = config.token_env;
    }
  }
  let file: StoredToken | undefined;
  const path = tokenFilePath(config);
  if (grants.length === 0 && path !== undefined) {
    file = await loadOrCreateToken(path);
    grants.push({ token: file.token, agents: ["*"] });
  }
  if (grants.length === 0) {
    throw new TerretError(
      "NoToken",
      "Cannot start the socket: no token is configured (list tokens, set the variable token_env names, or " +
        "name a token_file)",
    );
  }
  return {
    grants,
    report: {
      configured: config.tokens.length,
      env: fromEnv,
      file: file === undefined ? undefined : { path: file.path, created: file.created },
      generated: file?.created === true ? file.token : undefined,
    },
  };
}
