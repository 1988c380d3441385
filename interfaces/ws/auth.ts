/**
 * Bearer-token auth for the socket: the token from the `Authorization` header or the browser subprotocols, compared
 * in constant time against every configured token, then the matching token's agent-id globs.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { PatternSet } from "@terret/core/tools";
import type { TokenGrant } from "./config.ts";

/** The subprotocol a browser client offers (and the server selects) alongside `bearer.<token>`. */
export const SUBPROTOCOL = "terret.v1";
const BEARER_PROTOCOL = "bearer.";

/** A presented token and whether it came as a subprotocol (then the server must select {@linkcode SUBPROTOCOL}). */
export interface Presented {
  readonly token: string;
  readonly viaSubprotocol: boolean;
}

/**
 * The token a request presents: `Authorization: Bearer <token>` (the scheme case-insensitive), else a
 * `bearer.<token>` subprotocol offered together with `terret.v1`; `undefined` when there is none.
 */
export function presentedToken(headers: Headers): Presented | undefined {
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    const match = /^bearer +(\S+) *$/i.exec(authorization);
    return match === null ? undefined : { token: match[1]!, viaSubprotocol: false };
  }
  const offered = (headers.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== "");
  if (!offered.includes(SUBPROTOCOL)) return undefined;
  const bearer = offered.find((protocol) => protocol.startsWith(BEARER_PROTOCOL));
  if (bearer === undefined || bearer.length === BEARER_PROTOCOL.length) return undefined;
  return { token: bearer.slice(BEARER_PROTOCOL.length), viaSubprotocol: true };
}

interface Entry {
  readonly digest: Buffer;
  readonly agents: PatternSet;
  readonly grant: TokenGrant;
}

/**
 * The configured tokens. `authorize` hashes the presented token and compares the digest with every configured
 * token's digest using a timing-safe comparison, always all of them (no early exit, equal lengths), so neither a
 * token's prefix nor its length shows in the timing; only then are the matching token's globs checked.
 */
export class TokenGate {
  readonly #entries: readonly Entry[];

  constructor(grants: readonly TokenGrant[]) {
    this.#entries = grants.map((grant) => ({
      digest: digest(grant.token),
      agents: new PatternSet(grant.agents),
      grant,
    }));
  }

  /** The grant whose token is `token` when it is granted `agentId`, else `undefined`. */
  authorize(token: string | undefined, agentId: string): TokenGrant | undefined {
    const found = this.#find(token);
    return found !== undefined && found.agents.test(agentId) ? found.grant : undefined;
  }

  /**
   * The grant whose token is `token` (compared as `authorize` does) and a test of the agent ids it is granted, or
   * `undefined`: for requests that name no single agent (`GET /v1/agents`).
   */
  grantOf(
    token: string | undefined,
  ): { readonly grant: TokenGrant; granted(agentId: string): boolean } | undefined {
    const found = this.#find(token);
    if (found === undefined) return undefined;
    return { grant: found.grant, granted: (agentId) => found.agents.test(agentId) };
  }

  #find(token: string | undefined): Entry | undefined {
    const presented = digest(token ?? "");
    let found: Entry | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(presented, entry.digest) && token !== undefined) found ??= entry;
    }
    return found;
  }

  /** True while `grant` (by its token) is still configured and granted `agentId`. */
  stillGrants(grant: TokenGrant, agentId: string): boolean {
    return this.authorize(grant.token, agentId) !== undefined;
  }
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
