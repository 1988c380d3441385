/**
 * The encrypted credential store: provider secrets in one file, sealed whole with AES-256-GCM (WebCrypto) under the
 * key in `TERRET_CREDENTIALS_KEY`, written with mode 0600.
 *
 * @module
 */
import { TerretError } from "@terret/hames";

/** The variable holding the store's key: 32 bytes, base64 (`openssl rand -base64 32`) or 64 hex digits. */
export const CREDENTIALS_KEY_ENV = "TERRET_CREDENTIALS_KEY";

const FORMAT = "terret-credentials";
const VERSION = 1;
const AAD = new TextEncoder().encode(`${FORMAT}/${VERSION}`);

interface Sealed {
  readonly format: typeof FORMAT;
  readonly version: typeof VERSION;
  readonly iv: string;
  readonly data: string;
}

/**
 * An open credential store.
 *
 * Contract: a store file that exists is only ever read by decrypting it with its key; a missing key, a key of the
 * wrong shape, a file of another format (plain text included) or a file the key does not open is refused with a
 * `TerretError` (`CredentialsLocked`, `CredentialsKeyInvalid`, `CredentialsStoreInvalid`), never read as plain
 * text. Every write seals the whole file again under a fresh IV and replaces it atomically (a temporary file of
 * mode 0600, then a rename), so a crash leaves the old store or the new one. Values are never part of a message.
 */
export class CredentialStore {
  readonly #path: string;
  readonly #key: CryptoKey;
  readonly #entries: Map<string, string>;

  private constructor(path: string, key: CryptoKey, entries: Map<string, string>) {
    this.#path = path;
    this.#key = key;
    this.#entries = entries;
  }

  /**
   * Opens the store at `path` (an absent file is an empty store) with the key text `keyText`.
   *
   * @throws {TerretError} `CredentialsLocked` when the file exists and no key is given, `CredentialsKeyInvalid` for a
   *   key that is not 32 bytes, `CredentialsStoreInvalid` for a file that is not a store or that the key does not open
   */
  static async open(path: string, keyText: string | undefined): Promise<CredentialStore> {
    let text: string | undefined;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    if (keyText === undefined || keyText === "") {
      throw new TerretError(
        "CredentialsLocked",
        text === undefined
          ? `Cannot open the credential store "${path}": ${CREDENTIALS_KEY_ENV} is not set (32 bytes, base64: ` +
            "openssl rand -base64 32)"
          : `Cannot read the credential store "${path}": it is encrypted and ${CREDENTIALS_KEY_ENV} is not set ` +
            "(the store is never read without its key)",
        { details: { path } },
      );
    }
    const key = await importKey(keyText);
    if (text === undefined) return new CredentialStore(path, key, new Map());
    return new CredentialStore(path, key, await unseal(path, key, text));
  }

  /** The path of the store file. */
  get path(): string {
    return this.#path;
  }

  /** The value stored for `name`, or `undefined`. */
  get(name: string): string | undefined {
    return this.#entries.get(name);
  }

  /** The stored names, sorted. */
  names(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** Stores `value` under `name` and writes the store. */
  async set(name: string, value: string): Promise<void> {
    this.#entries.set(name, value);
    await this.#write();
  }

  /** Removes `name` and writes the store; false when it was not there (nothing written). */
  async delete(name: string): Promise<boolean> {
    if (!this.#entries.delete(name)) return false;
    await this.#write();
    return true;
  }

  async #write(): Promise<void> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = new TextEncoder().encode(JSON.stringify(Object.fromEntries(this.#entries)));
    const data = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: AAD },
        this.#key,
        plain,
      ),
    );
    const sealed: Sealed = {
      format: FORMAT,
      version: VERSION,
      iv: toBase64(iv),
      data: toBase64(data),
    };
    const dir = this.#path.slice(0, Math.max(this.#path.lastIndexOf("/"), 0)) || ".";
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = `${this.#path}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.writeTextFile(temp, `${JSON.stringify(sealed)}\n`, { mode: 0o600 });
      await Deno.chmod(temp, 0o600);
      await Deno.rename(temp, this.#path);
    } catch (error) {
      await Deno.remove(temp).catch(() => {});
      throw error;
    }
  }
}

async function importKey(text: string): Promise<CryptoKey> {
  const bytes = decodeKey(text.trim());
  if (bytes === undefined || bytes.length !== 32) {
    throw new TerretError(
      "CredentialsKeyInvalid",
      `Cannot use ${CREDENTIALS_KEY_ENV}: it must be 32 bytes as base64 (openssl rand -base64 32) or 64 hex digits`,
    );
  }
  return await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
}

function decodeKey(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    return Uint8Array.from(text.match(/../g)!, (pair) => parseInt(pair, 16));
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(
      atob(text.replaceAll("-", "+").replaceAll("_", "/")),
      (c) => c.charCodeAt(0),
    );
  } catch {
    return undefined;
  }
}

async function unseal(path: string, key: CryptoKey, text: string): Promise<Map<string, string>> {
  const invalid = (why: string): TerretError =>
    new TerretError(
      "CredentialsStoreInvalid",
      `Cannot read the credential store "${path}": ${why}`,
      {
        details: { path },
      },
    );
  let sealed: Partial<Sealed>;
  try {
    sealed = JSON.parse(text) as Partial<Sealed>;
  } catch {
    throw invalid("it is not an encrypted store (refusing to read it as plain text)");
  }
  if (
    sealed === null || typeof sealed !== "object" || sealed.format !== FORMAT ||
    sealed.version !== VERSION || typeof sealed.iv !== "string" || typeof sealed.data !== "string"
  ) {
    throw invalid("it is not an encrypted store (refusing to read it as plain text)");
  }
  let plain: ArrayBuffer;
  try {
    plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(sealed.iv), additionalData: AAD },
      key,
      fromBase64(sealed.data),
    );
  } catch {
    throw invalid(
      `${CREDENTIALS_KEY_ENV} does not open it (a different key, or the file was altered)`,
    );
  }
  const entries = JSON.parse(new TextDecoder().decode(plain)) as Record<string, unknown>;
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(entries)) {
    if (typeof value === "string") out.set(name, value);
  }
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}
