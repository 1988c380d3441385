/**
 * The client side of `bench/ws_fanout.ts`, run in a Worker so the clients do not share the server's event loop.
 * Each job opens raw TCP WebSocket connections (far cheaper to read than `WebSocket` message events, so the
 * clients are never what the benchmark measures), optionally subscribes, counts `event` frames by their first
 * bytes, and reports when every connection has received its share.
 *
 * @module
 */

/** A job the bench posts. */
export interface ClientJob {
  readonly urls: readonly string[];
  readonly token: string;
  /** `from_seq` to subscribe from, or `null` for the raw floor (which sends without being asked). */
  readonly subscribe: number | null;
  /** How many `event` frames each connection (by index in `urls`) must receive. */
  readonly expect: readonly number[];
}

/** What the worker posts back. */
export type ClientReport =
  | { readonly kind: "ready" }
  | { readonly kind: "done"; readonly at: number }
  | { readonly kind: "failed"; readonly message: string };

interface WorkerScope {
  onmessage: ((message: MessageEvent<ClientJob>) => void) | null;
  postMessage(report: ClientReport): void;
}

const scope = self as unknown as WorkerScope;
const encoder = new TextEncoder();
const EVENT = encoder.encode('{"type":"event"');

/** Counts event frames on one connection until `expect` have arrived. */
async function reader(conn: Deno.TcpConn, leftover: Uint8Array, expect: number): Promise<void> {
  let buffer = leftover;
  let count = 0;
  const chunk = new Uint8Array(256 * 1024);
  while (count < expect) {
    // Parse every complete frame in the buffer.
    let offset = 0;
    for (;;) {
      if (buffer.length - offset < 2) break;
      let length = buffer[offset + 1]! & 0x7f;
      let head = 2;
      if (length === 126) {
        if (buffer.length - offset < 4) break;
        length = (buffer[offset + 2]! << 8) | buffer[offset + 3]!;
        head = 4;
      } else if (length === 127) {
        if (buffer.length - offset < 10) break;
        length = Number(
          new DataView(buffer.buffer, buffer.byteOffset + offset + 2, 8).getBigUint64(0),
        );
        head = 10;
      }
      if (buffer.length - offset < head + length) break;
      const start = offset + head;
      if ((buffer[offset]! & 0x0f) === 0x1 && length >= EVENT.length) {
        let match = true;
        for (let i = 0; i < EVENT.length; i++) {
          if (buffer[start + i] !== EVENT[i]) {
            match = false;
            break;
          }
        }
        if (match) count++;
      }
      offset = start + length;
    }
    if (count >= expect) break;
    buffer = buffer.subarray(offset);
    const n = await conn.read(chunk);
    if (n === null) throw new Error(`The server closed after ${count} of ${expect} events`);
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
  }
}

/** Opens a raw WebSocket connection; returns it and the bytes read past the response head. */
async function open(url: string, token: string): Promise<[Deno.TcpConn, Uint8Array]> {
  const target = new URL(url);
  const conn = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
  await conn.write(encoder.encode(
    `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: ${btoa("bench-client-012")}\r\n` +
      `Sec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`,
  ));
  let buffer = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(chunk);
    if (n === null) throw new Error(`The server closed the handshake for ${url}`);
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
    for (let i = 3; i < buffer.length; i++) {
      if (
        buffer[i - 3] === 13 && buffer[i - 2] === 10 && buffer[i - 1] === 13 && buffer[i] === 10
      ) {
        return [conn, buffer.slice(i + 1)];
      }
    }
  }
}

/** A masked (zero mask) text frame, as a client must send it. */
function textFrame(text: string): Uint8Array {
  const body = encoder.encode(text);
  const frame = new Uint8Array(6 + body.length);
  frame.set([0x81, 0x80 | body.length, 0, 0, 0, 0]);
  frame.set(body, 6);
  return frame;
}

scope.onmessage = async (message) => {
  const job = message.data;
  const conns = await Promise.all(job.urls.map((url) => open(url, job.token)));
  if (job.subscribe !== null) {
    const frame = textFrame(JSON.stringify({ type: "subscribe", from_seq: job.subscribe }));
    for (const [conn] of conns) await conn.write(frame);
  }
  scope.postMessage({ kind: "ready" });
  try {
    await Promise.all(conns.map(([conn, leftover], i) => reader(conn, leftover, job.expect[i]!)));
    scope.postMessage({ kind: "done", at: performance.timeOrigin + performance.now() });
  } catch (error) {
    scope.postMessage({ kind: "failed", message: (error as Error).message });
  } finally {
    for (const [conn] of conns) conn.close();
  }
};
