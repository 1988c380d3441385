/**
 * The socket token `trt serve` generates when none is configured: 32 random bytes (base64url), stored in the
 * Terret home with mode 0600 and reused on later starts.
 *
 * @module
 */
import { TerretError } from "@terret/hames";
import { TOKEN_PATTERN } from "./config.ts";

/** The file, relative to the Terret home, that holds the generated token. */
export const TOKEN_FILE_NAME = "ws-token";

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
