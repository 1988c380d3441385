/**
 * One socket connection to one agent: `hello`, the client frames answered in order (the verbs besides `subscribe`
 * run in `_client_verbs.ts`), and the event pump. The pump
 * pulls the one replay-then-tail stream of the session log (`sessions.streamJson`) and keeps only the socket's flow
 * control: replayed events wait for room in the queue, live ones that do not fit drop the reader as lagged.
 *
 * @module
 */
import type { Logger } from "@terret/hames";
import { type Compaction, CORE_ERRORS, type Sessions } from "@terret/core";
import type { EventJson } from "@terret/core/sessions";
import type { AgentLink } from "./agent_gateway.ts";
import { ClientVerbs } from "./_client_verbs.ts";
import {
  type ClientFrame,
  type ErrorCode,
  type FrameRef,
  type FrameRefusal,
  isRefusal,
  parseClientFrame,
} from "./client_frames.ts";
import type { TokenGrant, WsConfig } from "./config.ts";
import { FrameBudget, utf8Length } from "./_limits.ts";
import {
  PAGE_BYTES,
  type ReplayJob,
  type ReplayScheduler,
  type SliceOutcome,
} from "./_replay_scheduler.ts";

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
  logUnreadable: 4010,
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
  /** The compaction service, when a `compaction` row is mounted. */
  compaction(): Compaction | undefined;
  /** Counts (`true`) or forgets (`false`) the connection as a subscriber of its session. */
  tail(connection: Connection, on: boolean): void;
  /** The live config (limits are read on every use, so a reconfigure applies at once). */
  readonly config: WsConfig;
  /** Where replays take their turns. */
  readonly replays: ReplayScheduler;
  readonly logger: Logger | undefined;
  /** The serialized frame for `event`. */
  frameOf(event: EventJson): EventFrame;
  /** Called when the connection is dropped as lagged. */
  lagged(connection: Connection): void;
  /** Called once when the socket has closed. */
  closed(connection: Connection): void;
}

/** Bytes a replay keeps queued on its socket at most (or `queue_limit` when smaller); a full queue blocks it. */
const REPLAY_WINDOW = 1024 * 1024;

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
  readonly #verbs: ClientVerbs;
  readonly #abort = new AbortController();
  #answers: Promise<void> = Promise.resolve();
  #pump: Promise<void> = Promise.resolve();
  #state: "connecting" | "open" | "closing" | "closed" = "connecting";
  #subscribed = false;
  /** True while counted as a subscriber of the session. */
  #tailing = false;
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
    this.#verbs = new ClientVerbs(link, host, grant, {
      ack: (ref) => this.#ack(ref),
      refuse: (refusal) => this.#refuse(refusal),
    });
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
    if (frame.type === "subscribe") return await this.#subscribe(frame.ref, frame.from_seq);
    return await this.#verbs.apply(frame);
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
    this.#tailing = true;
    this.#host.tail(this, true);
    this.#pump = this.#run(start, head).catch((error) => {
      if (this.#abort.signal.aborted) return;
      if (CORE_ERRORS.is(error, "StoreCorrupt")) {
        return this.#unreadable(error.details);
      }
      this.#host.logger?.log("error", "The socket's event stream failed", {
        agent_id: this.agentId,
        session_id: this.sessionId,
        error,
      });
      this.close(CLOSE.internal, "internal error");
    });
  }

  /**
   * Pulls the session's stream from `start`: the events up to `head` (the replay proper) in slices the scheduler
   * grants, under flow control, then the rest by the live rule. The stream guarantees no gap and no duplicate across
   * the hand-over.
   */
  async #run(start: number, head: number): Promise<void> {
    const signal = this.#abort.signal;
    const events = this.#host.sessions.streamJson(this.sessionId, {
      from_seq: start,
      signal,
      page_bytes: PAGE_BYTES,
    })[Symbol.asyncIterator]();
    /** The batch being sent, and the index of its first event not yet sent. */
    let batch: readonly EventJson[] = [];
    let index = 0;
    let failure: { error: unknown } | undefined;
    /** Pulls the next batch once the current one is sent; false when the stream ended. */
    const refill = async (): Promise<boolean> => {
      const next = await events.next();
      if (next.done === true) return false;
      batch = next.value;
      index = 0;
      return true;
    };
    try {
      if (start <= head) {
        const job: ReplayJob = {
          slice: async (bytes: number): Promise<SliceOutcome> => {
            try {
              const window = this.#replayWindow();
              // At most the socket's queue: what it held when the slice began (or last looked) plus three bytes per
              // UTF-16 unit sent since. The socket is asked again only when that bound reaches the window.
              let bound = this.#state === "open" ? this.#socket.bufferedAmount : 0;
              for (let sent = 0; sent < bytes;) {
                if (this.#state !== "open") return "done";
                if (index >= batch.length) {
                  if (!await refill() || this.#state !== "open") return "done";
                  continue;
                }
                const event = batch[index]!;
                if (event.seq > head) return "done";
                // A replayed event is this connection's own read: framed here, not cached for others.
                const frame: EventFrame = {
                  text: `{"type":"event","event":${event.json}}`,
                  bytes: undefined,
                };
                const length = frame.text.length;
                if (bound + length * 3 > window) {
                  if (!this.#fits(frame, window)) return "blocked";
                  bound = this.#socket.bufferedAmount;
                }
                this.#socket.send(frame.text);
                bound += length * 3;
                this.#lastSent = event.seq;
                index++;
                sent += length;
                if (event.seq === head) return "done";
              }
              return "more";
            } catch (error) {
              failure = { error };
              return "done";
            }
          },
          drained: () =>
            this.#state !== "open" || this.#socket.bufferedAmount <= this.#replayWindow() / 2,
          queued: () => this.#state === "closed" ? 0 : this.#socket.bufferedAmount,
        };
        await this.#host.replays.run(job, signal);
        if (failure !== undefined) throw failure.error;
      }
      for (;;) {
        if (this.#state !== "open") return;
        if (index >= batch.length) {
          if (!await refill()) return;
          continue;
        }
        const event = batch[index]!;
        if (!this.#sendLive(event.seq, this.#host.frameOf(event))) return;
        index++;
      }
    } finally {
      await events.return?.();
    }
  }

  /** The most a replay keeps queued on the socket. */
  #replayWindow(): number {
    return Math.min(this.#host.config.queue_limit, REPLAY_WINDOW);
  }

  /**
   * The store could not return the next seq (a missing or undecodable row): says so with an `error` frame naming the
   * session and seq, logs it, and closes with 4010. The store has logged the row; the client is not told where the
   * store is.
   */
  #unreadable(details: Readonly<Record<string, unknown>> | undefined): void {
    const seq = typeof details?.seq === "number" ? details.seq : this.#lastSent + 1;
    this.#host.logger?.log(
      "error",
      "Closed a socket: the session log cannot be read at the next seq",
      {
        agent_id: this.agentId,
        session_id: this.sessionId,
        seq,
        store: details?.store,
      },
    );
    this.#send({
      type: "error",
      ref: null,
      code: "log_unreadable",
      message:
        `Cannot send seq ${seq} of session "${this.sessionId}": the session log cannot be read there (the server's log names the row)`,
      session_id: this.sessionId,
      seq,
    });
    this.close(CLOSE.logUnreadable, "log unreadable");
  }

  /** Sends one event in the live tail; false (and the reader dropped as lagged) when it does not fit. */
  #sendLive(seq: number, frame: EventFrame): boolean {
    if (this.#state !== "open") return false;
    if (!this.#fits(frame, this.#host.config.queue_limit)) {
      this.#lagged();
      return false;
    }
    this.#socket.send(frame.text);
    this.#lastSent = seq;
    return true;
  }

  /** True when `frame` fits a queue of `limit` bytes now (a frame always fits an empty queue). */
  #fits(frame: EventFrame, limit: number): boolean {
    const buffered = this.#socket.bufferedAmount;
    if (buffered === 0) return true;
    if (buffered + frame.text.length * 3 <= limit) return true;
    frame.bytes ??= utf8Length(frame.text);
    return buffered + frame.bytes <= limit;
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
    if (!this.#tailing) return;
    this.#tailing = false;
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
