/**
 * Clients for the socket protocol tests: a JSON WebSocket client over Deno's real `WebSocket`, and a raw TCP client
 * that speaks HTTP and WebSocket framing by hand, for what a well-behaved client cannot do (malformed, oversized
 * and binary frames; reading nothing at all; comparing raw HTTP answers byte for byte).
 *
 * @module
 */

/** A frame the server sent, parsed. */
export type Frame = Record<string, unknown>;

/** Rejects with `what` when `promise` has not settled within `ms` (a deadline that fails a test, never a sleep). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** How a connection ended. */
export interface Closed {
  readonly code: number;
  readonly reason: string;
}

/** Options for {@linkcode WsClient.open}. */
export interface OpenOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** Subprotocols offered (the browser form of auth). */
  readonly protocols?: readonly string[];
}

/** A JSON client over Deno's `WebSocket`: every text frame parsed and queued, the close recorded. */
export class WsClient {
  readonly socket: WebSocket;
  /** Every frame received, in order. */
  readonly frames: Frame[] = [];
  /** Every frame received, as the text that came over the wire. */
  readonly texts: string[] = [];
  /** Resolves when the connection has closed. */
  readonly closed: Promise<Closed>;
  #read = 0;
  #wake: (() => void) | undefined;
  #closed: Closed | undefined;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    this.closed = new Promise((resolve) => {
      socket.addEventListener("close", (event) => {
        this.#closed ??= { code: event.code, reason: event.reason };
        resolve(this.#closed);
        this.#wake?.();
      });
    });
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") throw new TypeError("The server sent a binary frame");
      this.texts.push(event.data);
      this.frames.push(JSON.parse(event.data));
      this.#wake?.();
    });
  }

  /** Connects to `url` and resolves once open; rejects when the handshake fails. */
  static open(url: string, options: OpenOptions = {}): Promise<WsClient> {
    const socket = new WebSocket(url, {
      ...(options.token === undefined
        ? {}
        : { headers: { authorization: `Bearer ${options.token}` } }),
      ...(options.protocols === undefined ? {} : { protocols: [...options.protocols] }),
    });
    const client = new WsClient(socket);
    return within(
      new Promise<WsClient>((resolve, reject) => {
        socket.addEventListener("open", () => resolve(client), { once: true });
        socket.addEventListener(
          "error",
          () => void client.closed.then(() => reject(new Error(`Cannot connect to ${url}`))),
          { once: true },
        );
      }),
      10_000,
      `connecting to ${url}`,
    );
  }

  /** The subprotocol the server selected. */
  get protocol(): string {
    return this.socket.protocol;
  }

  /** Sends `frame` as JSON text. */
  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The next unread frame; fails after `ms` or when the connection closes first. */
  async next(ms = 10_000): Promise<Frame> {
    await this.#waitFor(() => this.#read < this.frames.length, ms, "the next frame");
    return this.frames[this.#read++]!;
  }

  /** Reads frames until `stop(frame)` is true; returns them all, the stopping one included. */
  async readUntil(stop: (frame: Frame) => boolean, ms = 10_000): Promise<Frame[]> {
    const out: Frame[] = [];
    for (;;) {
      const frame = await this.next(ms);
      out.push(frame);
      if (stop(frame)) return out;
    }
  }

  /** Reads `count` frames. */
  async take(count: number, ms = 10_000): Promise<Frame[]> {
    const out: Frame[] = [];
    while (out.length < count) out.push(await this.next(ms));
    return out;
  }

  /** Frames received and not yet read, without waiting. */
  drain(): Frame[] {
    const out = this.frames.slice(this.#read);
    this.#read = this.frames.length;
    return out;
  }

  /** Closes (if open) and waits for the close. */
  async close(code = 1000): Promise<Closed> {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(code);
    return await within(this.closed, 10_000, "the client close");
  }

  async #waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
    const started = performance.now();
    while (!check()) {
      if (this.#closed !== undefined) {
        throw new Error(
          `The connection closed (${this.#closed.code} ${this.#closed.reason}) while waiting for ${what}`,
        );
      }
      const left = ms - (performance.now() - started);
      if (left <= 0) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#wake = undefined;
          resolve();
        }, left);
        this.#wake = () => {
          clearTimeout(timer);
          this.#wake = undefined;
          resolve();
        };
      });
    }
  }
}

/** A WebSocket frame as the raw client reads it. */
export interface RawFrame {
  readonly opcode: number;
  readonly payload: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An HTTP response head as read off the wire. */
export interface RawHead {
  readonly status: number;
  /** The status line and header lines, as sent (without the blank line). */
  readonly lines: readonly string[];
  readonly headers: Headers;
}

/**
 * A hand-driven TCP client: an HTTP request, then WebSocket frames written and read by hand. It reads only when
 * asked, so it can play a client that never reads.
 */
export class RawClient {
  readonly conn: Deno.TcpConn;
  #buffer = new Uint8Array(0);
  #eof = false;

  private constructor(conn: Deno.TcpConn) {
    this.conn = conn;
  }

  /** Connects to `port` on 127.0.0.1. */
  static async connect(port: number): Promise<RawClient> {
    return new RawClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Connects and performs a WebSocket handshake on `path` with `headers`; returns the client and the head. */
  static async upgrade(
    port: number,
    path: string,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<{ client: RawClient; head: RawHead }> {
    const client = await RawClient.connect(port);
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${btoa("terret-raw-12345")}`,
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    await client.write(encoder.encode(`${lines.join("\r\n")}\r\n\r\n`));
    const head = await client.readHead();
    return { client, head };
  }

  /** Sends `request` verbatim and reads until the server closes: the whole raw response. */
  static async exchange(port: number, request: string): Promise<Uint8Array> {
    const client = await RawClient.connect(port);
    try {
      await client.write(encoder.encode(request));
      return await client.readToEnd();
    } finally {
      client.close();
    }
  }

  /** Writes all of `bytes`. */
  async write(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) offset += await this.conn.write(bytes.subarray(offset));
  }

  /** Reads an HTTP response head. */
  async readHead(): Promise<RawHead> {
    for (;;) {
      const text = decoder.decode(this.#buffer);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        const headBytes = encoder.encode(text.slice(0, end + 4)).length;
        this.#buffer = this.#buffer.slice(headBytes);
        const lines = text.slice(0, end).split("\r\n");
        const headers = new Headers();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
        }
        return { status: Number(lines[0]!.split(" ")[1]), lines, headers };
      }
      if (!await this.#fill()) throw new Error(`The server closed before a response head: ${text}`);
    }
  }

  /** Sends one frame, masked as a client must, optionally with a wrong FIN or a forged length. */
  async sendFrame(opcode: number, payload: Uint8Array): Promise<void> {
    const mask = crypto.getRandomValues(new Uint8Array(4));
    const length = payload.length;
    const head = length < 126 ? 2 : length < 65536 ? 4 : 10;
    const frame = new Uint8Array(head + 4 + length);
    frame[0] = 0x80 | opcode;
    if (length < 126) frame[1] = 0x80 | length;
    else if (length < 65536) {
      frame[1] = 0x80 | 126;
      new DataView(frame.buffer).setUint16(2, length);
    } else {
      frame[1] = 0x80 | 127;
      new DataView(frame.buffer).setBigUint64(2, BigInt(length));
    }
    frame.set(mask, head);
    for (let i = 0; i < length; i++) frame[head + 4 + i] = payload[i]! ^ mask[i % 4]!;
    await this.write(frame);
  }

  /** Sends a text frame. */
  sendText(text: string): Promise<void> {
    return this.sendFrame(0x1, encoder.encode(text));
  }

  /** Reads one frame; `undefined` at end of stream. */
  async readFrame(): Promise<RawFrame | undefined> {
    for (;;) {
      const frame = this.#parse();
      if (frame !== undefined) return frame;
      if (!await this.#fill()) return undefined;
    }
  }

  /** Reads frames until a close frame (answering it) or end of stream; text frames are parsed. */
  async readUntilClose(): Promise<{ frames: Frame[]; close: Closed | undefined }> {
    const frames: Frame[] = [];
    for (;;) {
      const frame = await this.readFrame();
      if (frame === undefined) return { frames, close: undefined };
      if (frame.opcode === 0x1) frames.push(JSON.parse(decoder.decode(frame.payload)));
      else if (frame.opcode === 0x8) {
        const view = new DataView(frame.payload.buffer, frame.payload.byteOffset);
        const code = frame.payload.length >= 2 ? view.getUint16(0) : 1005;
        const reason = decoder.decode(frame.payload.subarray(2));
        try {
          await this.sendFrame(0x8, frame.payload.slice(0, 2));
        } catch {
          // The server may already have dropped the connection.
        }
        return { frames, close: { code, reason } };
      }
    }
  }

  /** Reads exactly `count` bytes (fewer only at end of stream). */
  async readExactly(count: number): Promise<Uint8Array> {
    while (this.#buffer.length < count && await this.#fill());
    const out = this.#buffer.slice(0, count);
    this.#buffer = this.#buffer.slice(count);
    return out;
  }

  /** Reads until the server closes the TCP connection. */
  async readToEnd(): Promise<Uint8Array> {
    while (await this.#fill());
    const out = this.#buffer;
    this.#buffer = new Uint8Array(0);
    return out;
  }

  /** Closes the TCP connection (idempotent). */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }

  async #fill(): Promise<boolean> {
    if (this.#eof) return false;
    const chunk = new Uint8Array(64 * 1024);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch {
      n = null;
    }
    if (n === null) {
      this.#eof = true;
      return false;
    }
    const next = new Uint8Array(this.#buffer.length + n);
    next.set(this.#buffer);
    next.set(chunk.subarray(0, n), this.#buffer.length);
    this.#buffer = next;
    return true;
  }

  #parse(): RawFrame | undefined {
    const bytes = this.#buffer;
    if (bytes.length < 2) return undefined;
    let length = bytes[1]! & 0x7f;
    let offset = 2;
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    if (length === 126) {
      if (bytes.length < 4) return undefined;
      length = view.getUint16(2);
      offset = 4;
    } else if (length === 127) {
      if (bytes.length < 10) return undefined;
      length = Number(view.getBigUint64(2));
      offset = 10;
    }
    if (bytes.length < offset + length) return undefined;
    const frame = { opcode: bytes[0]! & 0x0f, payload: bytes.slice(offset, offset + length) };
    this.#buffer = bytes.slice(offset + length);
    return frame;
  }
}

/** The raw response text with its `date` header line replaced, for byte-for-byte comparison. */
export function withoutDate(response: Uint8Array): string {
  return decoder.decode(response).replace(/\r\ndate: [^\r]*/i, "\r\ndate: <date>");
}
