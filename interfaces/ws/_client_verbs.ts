/**
 * The verbs a connection's client may send besides `subscribe`: each runs against the agent (or the session, the
 * approvals or the compaction service) and is answered with an ack or an error frame. Internal to the socket.
 *
 * @module
 */
import type { Compaction, Sessions } from "@terret/core";
import { amendPersona } from "@terret/core/prompt";
import { WS_ERRORS } from "./errors.ts";
import type { AgentLink } from "./agent_gateway.ts";
import type { ClientFrame, ErrorCode, FrameRef, FrameRefusal } from "./client_frames.ts";
import type { TokenGrant } from "./config.ts";

/** Every client frame but `subscribe`, which is the event pump's. */
export type VerbFrame = Exclude<ClientFrame, { type: "subscribe" }>;

/** How a verb is answered on the socket. */
export interface VerbAnswers {
  /** Sends `ack` for `ref`. */
  ack(ref: FrameRef | null): void;
  /** Sends an `error` frame (its message scrubbed) for a refused frame. */
  refuse(refusal: FrameRefusal): void;
}

/** What the verbs need from the server. */
export interface VerbHost {
  readonly sessions: Sessions;
  /** The compaction service, when a `compaction` row is mounted. */
  compaction(): Compaction | undefined;
}

/** The approvals service's refusals, as protocol error codes. */
const APPROVE_CODES: Readonly<Record<string, ErrorCode>> = {
  UnknownRequest: "unknown_request",
  AlreadyResolved: "already_resolved",
  InvalidDecision: "invalid_field",
  CannotRemember: "cannot_remember",
};

/**
 * A token's public id, recorded as `by.id` on the answers its clients give: `tok-` and the first 12 hex digits of
 * its SHA-256 (never the secret itself).
 */
export async function tokenId(token: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)),
  );
  return "tok-" +
    [...digest.slice(0, 6)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The verbs of one connection: its agent's link, its session and its token's grant. */
export class ClientVerbs {
  readonly #link: AgentLink;
  readonly #host: VerbHost;
  readonly #grant: TokenGrant;
  readonly #answers: VerbAnswers;

  constructor(link: AgentLink, host: VerbHost, grant: TokenGrant, answers: VerbAnswers) {
    this.#link = link;
    this.#host = host;
    this.#grant = grant;
    this.#answers = answers;
  }

  /** Runs one verb frame and answers it (an ack, or an error frame), in the order frames are applied. */
  async apply(frame: VerbFrame): Promise<void> {
    switch (frame.type) {
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
          await this.#host.sessions.append(this.#link.sessionId, {
            type: "policy/updated",
            payload: { allow: frame.allow },
          });
        });
      case "set_persona":
        return await this.#call(frame.ref, "amend the persona", async () => {
          await this.#link.ready();
          await amendPersona(this.#host.sessions, this.#link.sessionId, {
            text: frame.content,
            replace: frame.replace,
          });
        });
      case "compact": {
        const compaction = this.#host.compaction();
        if (compaction === undefined) {
          return this.#answers.refuse({
            ref: frame.ref,
            code: "not_supported",
            message: "Cannot compact the session: no compaction row is mounted on this server",
          });
        }
        // The summary is a model call: answered when it is durable, without holding up the frames after it.
        void this.#call(frame.ref, "compact the session", async () => {
          await compaction.compact(this.#link.sessionId, { instructions: frame.instructions });
        });
        return;
      }
      case "approve":
        return await this.#approve(frame);
      case "dispose":
        return await this.#call(frame.ref, "dispose the agent", () => this.#link.dispose());
    }
  }

  async #approve(frame: Extract<ClientFrame, { type: "approve" }>): Promise<void> {
    const approve = this.#link.approve;
    const disabled = {
      ref: frame.ref,
      code: "not_supported" as const,
      message: `Cannot resolve approval ${
        JSON.stringify(frame.request_id)
      }: durable approvals are not enabled on this server (config row approvals)`,
    };
    if (approve === undefined) return this.#answers.refuse(disabled);
    try {
      await approve.call(this.#link, frame.request_id, {
        decision: frame.decision,
        reason: frame.reason,
        remember: frame.remember,
        by: { kind: "client", id: await tokenId(this.#grant.token) },
      });
    } catch (error) {
      const code = WS_ERRORS.is(error) ? APPROVE_CODES[error.code] : undefined;
      if (WS_ERRORS.is(error, "ApprovalsDisabled")) return this.#answers.refuse(disabled);
      return this.#answers.refuse({
        ref: frame.ref,
        code: code ?? "internal",
        message: code === undefined
          ? `Cannot resolve approval ${JSON.stringify(frame.request_id)}: ${
            error instanceof Error ? error.message : String(error)
          }`
          : (error as Error).message,
      });
    }
    this.#answers.ack(frame.ref);
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
      this.#answers.ack(ref);
    };
    try {
      await run(durable);
    } catch (error) {
      if (acked) return;
      return this.#answers.refuse({
        ref,
        code: frameCodeOf(error),
        message: `Cannot ${what}: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    durable();
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
