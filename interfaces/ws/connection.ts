/**
 * One socket connection to one agent: `hello`, the client frames answered in order, and the event pump (replay
 * from the store, flow-controlled, then the live tail under a bounded byte queue).
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import type { SessionEvent, Sessions } from "@terret/core";
import type { AgentLink } from "./agent_gateway.ts";
import {
  type ClientFrame,
  type ErrorCode,
  type FrameRef,
  type FrameRefusal,
  isRefusal,
  parseClientFrame,
} from "./client_frames.ts";
import type { TokenGrant, WsConfig } from "./config.ts";
import { FrameBudget, type ReplaySlots, utf8Length } from "./_limits.ts";

/** The protocol version `hello` announces. */
export const PROTOCOL_VERSION = 1;

/** Close codes of docs/protocol.md §7. */
export const CLOSE = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
  lagged: 4008,
  superseded: 4009,
});

/** An `event` frame, serialized once per event object and shared by every connection that sends it. */
export interface EventFrame {
  readonly text: string;
  /** UTF-8 size, computed on first need. */
  bytes: number | undefined;
}

/** What a connection needs from its server. */
export interface ConnectionHost {
  readonly sessions: Sessions;
  /** Starts (`true`) or stops (`false`) delivering the session's `session/event`s to {@linkcode Connection.live}. */
  tail(connection: Connection, on: boolean): void;
  /** The live config (limits are read on every use, so a reconfigure applies at once). */
  readonly config: WsConfig;
  readonly slots: ReplaySlots;
  readonly logger: Logger | undefined;
  /** The serialized frame for `event`. */
  frameOf(event: SessionEvent): EventFrame;
  /** Called when the connection is dropped as lagged. */
  lagged(connection: Connection): void;
  /** Called once when the socket has closed. */
  closed(connection: Connection): void;
}

const DRAIN_POLL_MS = 2;
/** Events read from the store per page of a replay. */
const REPLAY_PAGE = 1000;
/** Live events buffered while a replay runs; past it the buffer is dropped and the replay reads on. */
const LIVE_BUFFER_LIMIT = 10_000;

/**
 * A connection. Created right after the upgrade; it owns the socket's handlers.
 *
 * Contract: it never cancels or fails the agent's turn, whatever happens to the socket; it sends nothing that is
 * not an answer to a client frame, `hello`, `replay_truncated`, `lagged`, or an event read from the log.
 */
export class Connection {
  readonly agentId: string;
  readonly sessionId: string;
  readonly grant: TokenGrant;
  readonly #socket: WebSocket;
  readonly #link: AgentLink;
  readonly #host: ConnectionHost;
  readonly #budget: FrameBudget;
  readonly #abort = new AbortController();
  #answers: Promise<void> = Promise.resolve();
  #pump: Promise<void> = Promise.resolve();
  #state: "connecting" | "open" | "closing" | "closed" = "connecting";
  #subscribed = false;
  /** `replay` while reading the store (live events are buffered), then `live`. */
  #mode: "idle" | "replay" | "live" = "idle";
  /** The next seq to send. */
  #next = 1;
  #buffer: SessionEvent[] = [];
  #behind = false;
  /** False once a frame decided the connection ends: later frames are ignored while earlier ones are answered. */
  #reading = true;
  #lastSent = 0;
  #lastBuffered = 0;
  #progressAt: number;

  constructor(
    socket: WebSocket,
    link: AgentLink,
    grant: TokenGrant,
    host: ConnectionHost,
    now: () => number,
  ) {
    this.agentId = link.agentId;
    this.sessionId = link.sessionId;
    this.grant = grant;
    this.#socket = socket;
    this.#link = link;
    this.#host = host;
    this.#budget = new FrameBudget(host.config.frame_rate, now);
    this.#progressAt = performance.now();
    socket.binaryType = "arraybuffer";
    socket.addEventListener("open", () => this.#opened());
    socket.addEventListener("message", (event) => this.#received(event.data));
    socket.addEventListener("close", () => this.#gone());
    socket.addEventListener("error", () => {
      // A failed socket is followed by its close event; nothing to do here.
    });
  }

  /** True until the connection has been told to close or has closed. */
  get open(): boolean {
    return this.#state === "connecting" || this.#state === "open";
  }

  /** Settles when the pump and every queued answer have finished (after a close, promptly). */
  async settled(): Promise<void> {
    await Promise.allSettled([this.#answers, this.#pump]);
  }

  /** Closes the connection with `code` (idempotent; the first close wins). */
  close(code: number, reason: string): void {
    if (this.#state === "closing" || this.#state === "closed") return;
    this.#state = "closing";
    this.#stopTail();
    this.#abort.abort();
    try {
      this.#socket.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  /**
   * Checks the send queue for progress: a queue holding bytes that has not shrunk for `send_timeout_seconds` is
   * a reader that stopped, and the connection is dropped as lagged.
   */
  checkStalled(now: number): void {
    if (this.#state !== "open") return;
    const buffered = this.#socket.bufferedAmount;
    if (buffered === 0 || buffered < this.#lastBuffered) this.#progressAt = now;
    this.#lastBuffered = buffered;
    if (now - this.#progressAt > this.#host.config.send_timeout_seconds * 1000) this.#lagged();
  }

  #opened(): void {
    this.#state = "open";
    this.#enqueue(async () => {
      const head = await this.#host.sessions.head(this.sessionId);
      this.#send({
        type: "hello",
        protocol: PROTOCOL_VERSION,
        agent_id: this.agentId,
        session_id: this.sessionId,
        head_seq: head,
      });
    });
  }

  #received(data: unknown): void {
    if (this.#state !== "open" || !this.#reading) return;
    const verdict = this.#budget.take();
    if (verdict === "drop") return;
    if (verdict === "close") {
      this.#reading = false;
      this.#enqueue(() => this.close(CLOSE.policy, "rate limit exceeded"));
      return;
    }
    if (verdict === "refuse") {
      const rate = this.#host.config.frame_rate;
      this.#answer({
        ref: null,
        code: "rate_limited",
        message:
          `Cannot accept more frames: over ${rate} frames per second (frames are dropped until the rate falls)`,
      });
      return;
    }
    const limit = this.#host.config.max_frame_bytes;
    if (typeof data !== "string") {
      const size = data instanceof ArrayBuffer ? data.byteLength : 0;
      if (size > limit) return this.#tooBig();
      this.#answer({
        ref: null,
        code: "binary_not_supported",
        message: "Cannot read a binary frame: the protocol is JSON in text frames",
      });
      return;
    }
    if (data.length > limit || (data.length * 3 > limit && utf8Length(data) > limit)) {
      return this.#tooBig();
    }
    const frame = parseClientFrame(data);
    this.#enqueue(() => isRefusal(frame) ? this.#refuse(frame) : this.#apply(frame));
  }

  #tooBig(): void {
    this.#reading = false;
    this.#enqueue(() => this.close(CLOSE.tooBig, "frame too big"));
  }

  async #apply(frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case "subscribe":
        return await this.#subscribe(frame.ref, frame.from_seq);
      case "message":
        return await this.#call(
          frame.ref,
          "queue the message",
          (durable) => this.#link.message(frame.content, { durable }),
        );
      case "steer":
        return await this.#call(
          frame.ref,
          "queue the steer",
          (durable) => this.#link.steer(frame.content, { wake: frame.wake, durable }),
        );
      case "cancel":
        return await this.#call(
          frame.ref,
          "cancel the turn",
          () => this.#link.cancel(frame.reason),
        );
      case "set_policy":
        return await this.#call(frame.ref, "set the policy", async () => {
          await this.#link.ready();
          await this.#host.sessions.append(this.sessionId, {
            type: "policy/updated",
            payload: { allow: frame.allow },
          });
        });
      case "dispose":
        return await this.#call(frame.ref, "dispose the agent", () => this.#link.dispose());
      case "approve":
        return this.#refuse({
          ref: frame.ref,
          code: "not_supported",
          message: `Cannot resolve approval ${
            JSON.stringify(frame.request_id)
          }: durable approvals are not enabled on this server`,
        });
    }
  }

  /**
   * Runs a verb and answers it: an ack once it succeeded, or once it calls `durable` (then before anything it
   * causes can be logged), else an error frame.
   */
  async #call(
    ref: FrameRef | null,
    what: string,
    run: (durable: () => void) => Promise<void>,
  ): Promise<void> {
    let acked = false;
    const durable = (): void => {
      if (acked) return;
      acked = true;
      this.#ack(ref);
    };
    try {
      await run(durable);
    } catch (error) {
      if (acked) return;
      return this.#refuse({
        ref,
        code: frameCodeOf(error),
        message: `Cannot ${what}: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    durable();
  }

  async #subscribe(ref: FrameRef | null, from: number): Promise<void> {
    if (this.#subscribed) {
      return this.#refuse({
        ref,
        code: "already_subscribed",
        message: "Cannot subscribe: this connection is already subscribed",
      });
    }
    const head = await this.#host.sessions.head(this.sessionId);
    if (from > head + 1) {
      return this.#refuse({
        ref,
        code: "from_seq_ahead",
        message:
          `Cannot subscribe from seq ${from}: the session's head is ${head}, so from_seq may be at most ${
            head + 1
          }`,
      });
    }
    this.#subscribed = true;
    this.#ack(ref);
    let start = from;
    const limit = this.#host.config.replay_limit;
    if (head - from + 1 > limit) {
      start = head - limit + 1;
      this.#send({ type: "replay_truncated", requested_from_seq: from, from_seq: start });
    }
    this.#lastSent = start - 1;
    this.#next = start;
    this.#mode = "replay";
    this.#host.tail(this, true);
    this.#pump = this.#replay(head).catch((error) => {
      if (this.#abort.signal.aborted) return;
      this.#host.logger?.log("error", "The socket's event stream failed", {
        agent_id: this.agentId,
        session_id: this.sessionId,
        error,
      });
      this.close(CLOSE.internal, "internal error");
    });
  }

  /**
   * Called synchronously for every durable event of this session, in seq order, once subscribed. During the replay
   * it is buffered (bounded); in the live tail it is sent at once, or the reader is dropped as lagged.
   */
  live(event: SessionEvent): void {
    if (this.#mode === "replay") {
      if (this.#behind) return;
      if (this.#buffer.length >= LIVE_BUFFER_LIMIT) {
        this.#buffer = [];
        this.#behind = true;
      } else this.#buffer.push(event);
      return;
    }
    if (this.#mode !== "live" || event.seq < this.#next) return;
    if (event.seq > this.#next) {
      // A gap cannot happen while the feed is ordered; should it, the store closes it.
      this.#mode = "replay";
      this.#behind = true;
      this.#pump = this.#replay(0).catch(() => this.close(CLOSE.internal, "internal error"));
      return;
    }
    this.#sendLive(event);
  }

  /**
   * Sends the store's events from `#next`: those up to `head` (the replay proper) under a replay slot and flow
   * control, later ones by the live rule; then hands over to the live tail with no gap and no duplicate (the
   * events committed meanwhile were buffered by {@linkcode live}).
   */
  async #replay(head: number): Promise<void> {
    const signal = this.#abort.signal;
    let release: (() => void) | undefined;
    try {
      if (this.#next <= head) release = await this.#host.slots.acquire(signal);
      for (;;) {
        if (this.#state !== "open") return;
        const page = await this.#host.sessions.read(this.sessionId, {
          from_seq: this.#next,
          limit: REPLAY_PAGE,
          signal,
        });
        for (const event of page) {
          if (this.#state !== "open") return;
          if (event.seq !== this.#next) continue;
          if (event.seq <= head) {
            const frame = this.#host.frameOf(event);
            if (!await this.#room(frame)) return;
            this.#socket.send(frame.text);
            this.#lastSent = event.seq;
            this.#next++;
          } else {
            release?.();
            release = undefined;
            if (!this.#sendLive(event)) return;
          }
        }
        if (this.#next > head) {
          release?.();
          release = undefined;
        }
        if (page.length === REPLAY_PAGE) continue;
        // Caught up with the store as of that read: what was committed since is buffered. Drain it and go live,
        // unless the buffer overflowed or shows a gap, in which case the store is read again.
        const buffered = this.#buffer;
        const behind = this.#behind;
        this.#buffer = [];
        this.#behind = false;
        let gap = behind;
        for (const event of buffered) {
          if (event.seq < this.#next) continue;
          if (event.seq > this.#next) {
            gap = true;
            break;
          }
          if (!this.#sendLive(event)) return;
        }
        if (gap) continue;
        this.#mode = "live";
        return;
      }
    } finally {
      release?.();
    }
  }

  /** Sends one event in the live tail; false (and the reader dropped as lagged) when it does not fit. */
  #sendLive(event: SessionEvent): boolean {
    if (this.#state !== "open") return false;
    const frame = this.#host.frameOf(event);
    if (!this.#fits(frame)) {
      this.#lagged();
      return false;
    }
    this.#socket.send(frame.text);
    this.#lastSent = event.seq;
    this.#next = event.seq + 1;
    return true;
  }

  /** True when `frame` fits the queue now (a frame always fits an empty queue). */
  #fits(frame: EventFrame): boolean {
    const buffered = this.#socket.bufferedAmount;
    if (buffered === 0) return true;
    const limit = this.#host.config.queue_limit;
    if (buffered + frame.text.length * 3 <= limit) return true;
    frame.bytes ??= utf8Length(frame.text);
    return buffered + frame.bytes <= limit;
  }

  /** Waits until `frame` fits the queue (the replay's flow control); false when the connection ended first. */
  async #room(frame: EventFrame): Promise<boolean> {
    while (!this.#fits(frame)) {
      if (this.#state !== "open") return false;
      await delay(DRAIN_POLL_MS, this.#abort.signal);
    }
    return this.#state === "open";
  }

  #lagged(): void {
    if (this.#state !== "open") return;
    this.#host.lagged(this);
    this.#send({ type: "lagged", last_seq: this.#lastSent });
    this.close(CLOSE.lagged, "lagged");
  }

  #ack(ref: FrameRef | null): void {
    if (ref !== null) this.#send({ type: "ack", ref });
  }

  #refuse(refusal: FrameRefusal): void {
    this.#send({
      type: "error",
      ref: refusal.ref,
      code: refusal.code,
      message: this.#scrub(refusal.message),
    });
  }

  /**
   * An error message may quote client input or an agent's error; it passes the log's scrubbers first, so nothing a
   * scrubber would keep out of the log reaches a socket through an answer either.
   */
  #scrub(message: string): string {
    const sessions = this.#host.sessions;
    if (!sessions.scrubbing) return message;
    try {
      const normalized = sessions.normalize("context/injected", { content: message });
      return (normalized.value as { content: string }).content;
    } catch {
      return "Cannot answer the frame: the error message could not be scrubbed";
    }
  }

  #answer(refusal: { ref: FrameRef | null; code: ErrorCode; message: string }): void {
    this.#enqueue(() => this.#refuse(refusal));
  }

  #send(frame: Record<string, unknown>): void {
    if (this.#state !== "open") return;
    try {
      this.#socket.send(JSON.stringify(frame));
    } catch {
      // The socket closed underneath; its close event follows.
    }
  }

  /** Runs `work` after every answer queued before it, so answers keep the order of the frames. */
  #enqueue(work: () => void | Promise<void>): void {
    this.#answers = this.#answers.then(work).catch((error) => {
      this.#host.logger?.log("error", "The socket failed to answer a frame", {
        agent_id: this.agentId,
        error,
      });
      this.close(CLOSE.internal, "internal error");
    });
  }

  #stopTail(): void {
    if (this.#mode === "idle") return;
    this.#mode = "idle";
    this.#buffer = [];
    this.#host.tail(this, false);
  }

  #gone(): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#stopTail();
    this.#abort.abort();
    this.#host.closed(this);
  }
}

/** The frame error code for a failed verb: retryable refusals keep their meaning on the wire. */
function frameCodeOf(error: unknown): ErrorCode {
  switch ((error as { code?: unknown })?.code) {
    case "AgentsBusy":
      return "unavailable";
    case "AgentBusy":
      return "agent_busy";
    case "QuotaExceeded":
      return "quota_exceeded";
    default:
      return "internal";
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
