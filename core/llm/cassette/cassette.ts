/**
 * Cassettes: model exchanges recorded byte for byte, so a real session can be replayed as a deterministic test.
 *
 * A cassette is a JSON Lines file. The first line is the header
 * `{"cassette":"terret-llm","version":1,"created_at":"…"}`; every further line is one model request (one
 * `llm/stream` dispatch):
 *
 * ```jsonc
 * {
 *   "key": "3f2a…",               // sha-256 of the canonical JSON of {role, request}: what replay matches on
 *   "role": "main",
 *   "request": { … },             // the provider-neutral LlmRequest
 *   "exchanges": [{               // one per HTTP attempt, in order (a retried request has several)
 *     "method": "POST",
 *     "url": "https://openrouter.ai/api/v1/chat/completions",   // query string and userinfo dropped
 *     "request_body": { … },      // the JSON body the adapter sent (no headers are recorded: no key)
 *     "status": 200,
 *     "headers": { "content-type": "text/event-stream" },
 *     "body": "data: …\n\n",      // the response bytes as UTF-8 text, or "body_base64" when not valid UTF-8
 *     "reads": [412, 1033],       // byte length of each network read, replayed as the same boundaries
 *     "end": "complete"           // "complete"; "dropped": the connection failed; "open": the client stopped
 *                                 // reading first (after [DONE], an error or an abort): replay then holds it open
 *   }],                           // or, when the connection failed: {"method","url","request_body","error"}
 *                                 // ("error" also holds the read error of a "dropped" body)
 *   "events": [ … ]               // the stream events the adapter yielded while recording
 * }
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { TerretError } from "../../errors.ts";
import { canonicalJson } from "../../sessions/digest.ts";
import { LlmRequestSchema, ModelRoleSchema } from "../schemas.ts";
import type { LlmRequest, ModelRole, StreamEvent } from "../vocabulary.ts";

/** The header line of a cassette. */
export interface CassetteHeader {
  /** The format's name. */
  readonly cassette: "terret-llm";
  /** The format's version. */
  readonly version: 1;
  /** When recording started (ISO-8601 UTC). */
  readonly created_at: string;
}

/** One recorded HTTP attempt. */
export interface CassetteExchange {
  /** The HTTP method. */
  readonly method: string;
  /** The URL, without its query string or userinfo. */
  readonly url: string;
  /** The JSON body the adapter sent (or its text when not JSON). */
  readonly request_body: unknown;
  /** Why the connection failed (no `status`), or why a `dropped` body failed. */
  readonly error?: string;
  /** The response status. */
  readonly status?: number;
  /** The response headers worth replaying. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The response bytes as UTF-8 text. */
  readonly body?: string;
  /** The response bytes in base64, when they are not valid UTF-8. */
  readonly body_base64?: string;
  /** The byte length of each network read. */
  readonly reads?: readonly number[];
  /** How the body ended: closed, failed, or left open by the client. */
  readonly end?: "complete" | "dropped" | "open";
}

/** One recorded model request with its HTTP attempts and resulting events. */
export interface CassetteInteraction {
  /** The match key ({@linkcode requestKey}). */
  readonly key: string;
  /** The model role asked. */
  readonly role: ModelRole;
  /** The provider-neutral request. */
  readonly request: LlmRequest;
  /** Each HTTP attempt, in order. */
  readonly exchanges: readonly CassetteExchange[];
  /** The events the adapter yielded. */
  readonly events: readonly StreamEvent[];
}

/** A parsed cassette. */
export interface Cassette {
  /** The first line. */
  readonly header: CassetteHeader;
  /** Every recorded request, in recording order. */
  readonly interactions: readonly CassetteInteraction[];
}

const HeaderSchema = z.object({
  cassette: z.literal("terret-llm"),
  version: z.literal(1),
  created_at: z.string(),
});

const ExchangeSchema = z.object({
  method: z.string(),
  url: z.string(),
  request_body: z.unknown(),
  error: z.string().optional(),
  status: z.number().int().min(200).max(599).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().optional(),
  body_base64: z.base64().optional(),
  reads: z.array(z.number().int().positive()).optional(),
  end: z.enum(["complete", "dropped", "open"]).optional(),
}).refine((exchange) => exchange.error !== undefined || exchange.status !== undefined, {
  message: "An exchange needs `status` or `error`",
});

const InteractionSchema = z.object({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  role: ModelRoleSchema,
  request: LlmRequestSchema,
  exchanges: z.array(ExchangeSchema),
  events: z.array(z.object({ type: z.string() }).passthrough()),
});

/** The header of a new cassette. */
export function cassetteHeader(now: Date = new Date()): CassetteHeader {
  return { cassette: "terret-llm", version: 1, created_at: now.toISOString() };
}

/**
 * The stable match key of a request: the sha-256 (hex) of the canonical JSON ({@linkcode canonicalJson}: sorted
 * keys, `undefined` dropped) of `{role, request}`.
 */
export function requestKey(role: ModelRole, request: LlmRequest): string {
  return createHash("sha256").update(canonicalJson({ role, request })).digest("hex");
}

/**
 * Parses cassette text.
 *
 * @param text the JSON Lines content
 * @param source the file name, for messages
 * @throws {TerretError} `CassetteInvalid` naming the line and the problem
 */
export function parseCassette(text: string, source: string): Cassette {
  const lines = text.split("\n").map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim() !== "");
  const first = lines[0];
  if (first === undefined) throw invalid(source, 1, "the file is empty");
  const header = HeaderSchema.safeParse(parseLine(first.line, source, first.number));
  if (!header.success) {
    throw invalid(source, first.number, "the first line is not a cassette header");
  }
  const interactions = lines.slice(1).map(({ line, number }) => {
    const parsed = InteractionSchema.safeParse(parseLine(line, source, number));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw invalid(source, number, `${issue.path.join(".") || "(line)"}: ${issue.message}`);
    }
    return parsed.data as unknown as CassetteInteraction;
  });
  return { header: header.data, interactions };
}

function parseLine(line: string, source: string, number: number): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    throw invalid(source, number, `invalid JSON (${(error as Error).message})`);
  }
}

function invalid(source: string, line: number, detail: string): TerretError {
  return new TerretError(
    "CassetteInvalid",
    `Cannot read cassette "${source}": line ${line}: ${detail}`,
    {
      details: { source, line },
    },
  );
}

/** Serialises one interaction as a cassette line (with its newline). */
export function formatInteraction(interaction: CassetteInteraction): string {
  return JSON.stringify(interaction) + "\n";
}

/**
 * Reads a cassette from a file path or a `file:`/`https:` URL (so a cassette shipped inside a package can be
 * located with `import.meta.url`).
 *
 * @throws {TerretError} `CassetteInvalid` when it cannot be read or parsed
 */
export async function readCassette(location: string | URL): Promise<Cassette> {
  const name = String(location);
  let text: string;
  try {
    text = location instanceof URL || /^[a-z][a-z0-9+.-]*:\/\//i.test(location)
      ? await fetchText(location)
      : await Deno.readTextFile(location);
  } catch (error) {
    throw new TerretError(
      "CassetteInvalid",
      `Cannot read cassette "${name}": ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseCassette(text, name);
}

async function fetchText(location: string | URL): Promise<string> {
  const response = await fetch(location);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`the server answered HTTP ${response.status}`);
  }
  return await response.text();
}

/** The response bytes of a recorded exchange. */
export function exchangeBytes(exchange: CassetteExchange): Uint8Array {
  if (exchange.body_base64 !== undefined) {
    return Uint8Array.from(atob(exchange.body_base64), (char) => char.charCodeAt(0));
  }
  return new TextEncoder().encode(exchange.body ?? "");
}

/**
 * The first place two JSON values differ, as a path and both values (clipped), or `undefined` when equal.
 *
 * @example
 * ```ts
 * import { jsonDifference } from "@terret/core/llm";
 * jsonDifference({ a: [1, 2] }, { a: [1, 3] }, "request"); // 'request.a[1]: recorded 2, got 3'
 * ```
 */
export function jsonDifference(
  recorded: unknown,
  actual: unknown,
  path: string,
): string | undefined {
  if (Object.is(recorded, actual)) return undefined;
  if (Array.isArray(recorded) && Array.isArray(actual)) {
    const shared = Math.min(recorded.length, actual.length);
    for (let i = 0; i < shared; i++) {
      const found = jsonDifference(recorded[i], actual[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    if (recorded.length === actual.length) return undefined;
    return `${path}: recorded ${recorded.length} items, got ${actual.length}`;
  }
  if (isObject(recorded) && isObject(actual)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(actual)])].sort();
    for (const key of keys) {
      const found = jsonDifference(recorded[key], actual[key], `${path}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return `${path}: recorded ${show(recorded)}, got ${show(actual)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
