/**
 * A minimal HTTP/1.1 client over a connection the caller already opened (to an address it checked): one GET per
 * connection, `Connection: close`, chunked and length-delimited bodies, gzip and deflate, a byte cap. `fetch` cannot
 * be pinned to an address (it resolves the name again), so WebFetch speaks HTTP itself. Internal to
 * `@terret/exec`.
 *
 * @module
 */

/** What one exchange returned. */
export interface PinnedResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The (decoded) body, at most the cap. */
  readonly body: Uint8Array;
  /** True when the body was cut at the cap. */
  readonly truncated: boolean;
}

/** Options of {@linkcode exchange}. */
export interface ExchangeOptions {
  /** The request target (`/path?query`). */
  readonly target: string;
  /** The `Host` header (name, and port when not the scheme's default). */
  readonly host: string;
  /** Extra request headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** Read the body (false for a redirect, whose body is not needed). */
  readonly readBody: (status: number) => boolean;
  /** The body cap in bytes (after decoding). */
  readonly maxBytes: number;
}

const MAX_HEAD = 64 * 1024;
const encoder = new TextEncoder();

/**
 * Sends a GET over `conn` and reads the response. The caller owns `conn` (closing it is how a deadline interrupts
 * a read).
 *
 * @throws {Error} on a malformed response, naming what was wrong
 */
export async function exchange(conn: Deno.Conn, options: ExchangeOptions): Promise<PinnedResponse> {
  const lines = [
    `GET ${options.target} HTTP/1.1`,
    `Host: ${options.host}`,
    ...Object.entries(options.headers).map(([name, value]) => `${name}: ${value}`),
    "Connection: close",
    "",
    "",
  ];
  await writeAll(conn, encoder.encode(lines.join("\r\n")));
  const reader = new ByteReader(conn);
  let head: { status: number; headers: Headers };
  do head = parseHead(await reader.until(new Uint8Array([13, 10, 13, 10]), MAX_HEAD)); while (
    head.status >= 100 && head.status < 200
  );
  if (!options.readBody(head.status) || head.status === 204 || head.status === 304) {
    return {
      status: head.status,
      headers: head.headers,
      body: new Uint8Array(0),
      truncated: false,
    };
  }
  const encoding = (head.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (!["identity", "gzip", "x-gzip", "deflate"].includes(encoding)) {
    throw new Error(`the server used an unsupported content encoding "${encoding}"`);
  }
  // A compressed body is read up to the cap too: decompression then stops at the cap.
  const raw = head.headers.get("transfer-encoding")?.toLowerCase().includes("chunked")
    ? await reader.chunked(options.maxBytes)
    : await reader.body(head.headers.get("content-length"), options.maxBytes);
  if (encoding === "identity") return { status: head.status, headers: head.headers, ...raw };
  const decoded = await decompress(
    raw.body,
    encoding === "deflate" ? "deflate" : "gzip",
    options.maxBytes,
  );
  return {
    status: head.status,
    headers: head.headers,
    body: decoded.body,
    truncated: raw.truncated || decoded.truncated,
  };
}

function parseHead(bytes: Uint8Array): { status: number; headers: Headers } {
  const text = new TextDecoder("latin1").decode(bytes);
  const [statusLine, ...rest] = text.split("\r\n").filter((line) => line !== "");
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine ?? "");
  if (match === null) {
    throw new Error(`the server sent a malformed status line ${JSON.stringify(statusLine)}`);
  }
  const headers = new Headers();
  for (const line of rest) {
    const colon = line.indexOf(":");
    if (colon <= 0) {
      throw new Error(`the server sent a malformed header line ${JSON.stringify(line)}`);
    }
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      throw new Error(`the server sent an invalid header ${JSON.stringify(line.slice(0, colon))}`);
    }
  }
  return { status: Number(match[1]), headers };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

async function decompress(
  bytes: Uint8Array,
  format: "gzip" | "deflate",
  maxBytes: number,
): Promise<{ body: Uint8Array; truncated: boolean }> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new DecompressionStream(format),
  );
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  try {
    while (size < maxBytes) {
      const { value, done } = await reader.read();
      if (done) return { body: concat(parts, size), truncated: false };
      parts.push(value);
      size += value.length;
    }
  } catch (error) {
    throw new Error(
      `the server sent a body that does not decompress (${(error as Error).message})`,
    );
  } finally {
    await reader.cancel().catch(() => {});
  }
  return { body: concat(parts, size).subarray(0, maxBytes), truncated: true };
}

function concat(parts: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Buffered reads over a connection. */
class ByteReader {
  readonly #conn: Deno.Conn;
  #store = new Uint8Array(32 * 1024);
  #start = 0;
  #end = 0;
  #eof = false;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  get #buffer(): Uint8Array {
    return this.#store.subarray(this.#start, this.#end);
  }

  async #fill(): Promise<boolean> {
    if (this.#eof) return false;
    if (this.#end === this.#store.length) {
      const length = this.#end - this.#start;
      const store = length * 2 > this.#store.length
        ? new Uint8Array(this.#store.length * 2)
        : this.#store;
      store.set(this.#store.subarray(this.#start, this.#end), 0);
      this.#store = store;
      this.#start = 0;
      this.#end = length;
    }
    const n = await this.#conn.read(this.#store.subarray(this.#end));
    if (n === null) {
      this.#eof = true;
      return false;
    }
    this.#end += n;
    return true;
  }

  #take(n: number): Uint8Array {
    const count = Math.min(n, this.#end - this.#start);
    const out = this.#store.slice(this.#start, this.#start + count);
    this.#start += count;
    return out;
  }

  /** Reads through `delimiter` (excluded from the result, consumed), failing past `limit` bytes. */
  async until(delimiter: Uint8Array, limit: number): Promise<Uint8Array> {
    for (;;) {
      const at = indexOf(this.#buffer, delimiter);
      if (at >= 0) {
        const out = this.#take(at);
        this.#take(delimiter.length);
        return out;
      }
      if (this.#buffer.length > limit) {
        throw new Error(`the server sent more than ${limit} bytes without a line end`);
      }
      if (!(await this.#fill())) throw new Error("the server closed the connection mid-response");
    }
  }

  /** A length-delimited body, or one that runs to the end of the connection. */
  async body(
    length: string | null,
    maxBytes: number,
  ): Promise<{ body: Uint8Array; truncated: boolean }> {
    const declared = length === null ? undefined : Number(length);
    if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0)) {
      throw new Error(`the server sent an invalid Content-Length ${JSON.stringify(length)}`);
    }
    const want = Math.min(declared ?? Infinity, maxBytes);
    while (this.#buffer.length < want && await this.#fill()) { /* reading */ }
    if (declared !== undefined && this.#buffer.length < want) {
      throw new Error("the server closed the connection before the body was complete");
    }
    const truncated = declared === undefined
      ? this.#buffer.length > maxBytes || !this.#eof
      : declared > maxBytes;
    return { body: this.#take(Math.min(want, this.#buffer.length)), truncated };
  }

  /** A chunked body, decoded. */
  async chunked(maxBytes: number): Promise<{ body: Uint8Array; truncated: boolean }> {
    const parts: Uint8Array[] = [];
    let size = 0;
    const crlf = new Uint8Array([13, 10]);
    for (;;) {
      const line = new TextDecoder().decode(await this.until(crlf, 1024)).split(";")[0]!.trim();
      if (!/^[0-9a-fA-F]{1,15}$/.test(line)) {
        throw new Error(`the server sent a malformed chunk size ${JSON.stringify(line)}`);
      }
      const length = parseInt(line, 16);
      if (length === 0) return { body: concat(parts, size), truncated: false };
      const take = Math.min(length, maxBytes - size);
      while (this.#buffer.length < length + 2 && await this.#fill()) {
        if (this.#buffer.length >= take && size + take >= maxBytes) break;
      }
      if (this.#buffer.length < take) throw new Error("the server closed the connection mid-chunk");
      parts.push(this.#take(take));
      size += take;
      if (size >= maxBytes) return { body: concat(parts, size), truncated: true };
      this.#take(length - take);
      await this.until(crlf, 2);
    }
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
