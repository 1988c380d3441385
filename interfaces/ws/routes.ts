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
  | { readonly kind: "stream"; readonly agentId: string }
  | { readonly kind: "bad_agent_id" }
  | { readonly kind: "not_found" };

const STREAM = /^\/v1\/agents\/([^/]*)\/stream$/;

/** Routes a request (`GET` only; anything else is not found). */
export function route(method: string, pathname: string): Route {
  if (method !== "GET") return { kind: "not_found" };
  if (pathname === "/healthz") return { kind: "health" };
  const match = STREAM.exec(pathname);
  if (match === null) return { kind: "not_found" };
  const agentId = match[1]!;
  return AGENT_ID_PATTERN.test(agentId) ? { kind: "stream", agentId } : { kind: "bad_agent_id" };
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

/** `200 {"status":"ok"}`. */
export function healthResponse(): Response {
  return new Response('{"status":"ok"}', {
    status: 200,
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
