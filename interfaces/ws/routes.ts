/**
 * The socket's HTTP routes and the plain-text answers it gives before (or instead of) an upgrade.
 *
 * @module
 */

/** Agent ids the socket accepts, matched on the raw path segment (never percent-decoded). */
export const AGENT_ID_PATTERN: RegExp = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** What a request path names. */
export type Route =
  | { readonly kind: "health" }
  | { readonly kind: "ready" }
  | { readonly kind: "stream"; readonly agentId: string }
  | { readonly kind: "agents" }
  | { readonly kind: "agent"; readonly agentId: string }
  | { readonly kind: "bad_agent_id" }
  | { readonly kind: "not_found" };

const STREAM = /^\/v1\/agents\/([^/]*)\/stream$/;
const AGENT = /^\/v1\/agents\/([^/]*)$/;

/** Routes a request (`GET` only; anything else is not found). */
export function route(method: string, pathname: string): Route {
  if (method !== "GET") return { kind: "not_found" };
  if (pathname === "/healthz") return { kind: "health" };
  if (pathname === "/readyz") return { kind: "ready" };
  if (pathname === "/v1/agents") return { kind: "agents" };
  const stream = STREAM.exec(pathname);
  const match = stream ?? AGENT.exec(pathname);
  if (match === null) return { kind: "not_found" };
  const agentId = match[1]!;
  if (!AGENT_ID_PATTERN.test(agentId)) return { kind: "bad_agent_id" };
  return stream === null ? { kind: "agent", agentId } : { kind: "stream", agentId };
}

/** A plain-text answer. */
export function textResponse(
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

/**
 * `200 {"status":"ok"}`, or `503 {"status":"saturated","saturated":[…]}` naming what is full: `connections` (the
 * server's connection cap) and/or `agents` (every resident agent busy at the cap).
 */
export function healthResponse(saturated: readonly string[] = []): Response {
  const ok = saturated.length === 0;
  return new Response(
    ok ? '{"status":"ok"}' : JSON.stringify({ status: "saturated", saturated }),
    { status: ok ? 200 : 503, headers: { "content-type": "application/json" } },
  );
}

/** A JSON answer. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/**
 * The one answer for every failed auth: a missing token, a wrong one, or one not granted this agent, whether or
 * not the agent exists. Built fresh each time from constants, so two answers differ only in Deno's `date`.
 */
export function unauthorizedResponse(): Response {
  return textResponse(401, "unauthorized", { "www-authenticate": 'Bearer realm="terret"' });
}
