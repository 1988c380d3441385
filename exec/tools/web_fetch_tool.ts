/**
 * `WebFetch`: a page fetched host-side behind a deny-by-default domain allow list and an SSRF floor, over a
 * connection pinned to the address that was checked, returned as readable text.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import { exchange, type PinnedResponse } from "./_http_pinned.ts";
import { htmlTitle, htmlToText } from "./_html_text.ts";
import {
  formatIp,
  hostAllowed,
  type IpAddress,
  isLocalName,
  parseIp,
  refusal,
} from "./_web_floor.ts";

/** Options of {@linkcode createWebFetchTool} (the `tools.std` row's `web_fetch` config). */
export interface WebFetchOptions {
  /** Hosts that may be fetched: `example.com`, `*.example.com` (subdomains), `*` (any). Empty: none. */
  readonly allow_domains: readonly string[];
  /** Also refuse private, shared, documentation and benchmarking ranges (loopback and link-local always are). */
  readonly block_private_ranges: boolean;
  /** The total wall-clock deadline of one call (resolution, connects, TLS, redirects, body), in ms. */
  readonly timeout_ms: number;
  /** The body cap in bytes (after decompression); a longer body is cut. */
  readonly max_bytes: number;
  /** Redirects followed (each hop checked again). */
  readonly max_redirects: number;
  /** Characters of text returned per call (`offset` pages through the rest). */
  readonly max_chars: number;
  /** The `User-Agent` sent. */
  readonly user_agent: string;
}

/** The defaults of {@linkcode WebFetchOptions}. */
export const DEFAULT_WEB_FETCH_OPTIONS: WebFetchOptions = Object.freeze({
  allow_domains: [],
  block_private_ranges: true,
  timeout_ms: 30_000,
  max_bytes: 5 * 1024 * 1024,
  max_redirects: 5,
  max_chars: 50_000,
  user_agent: "Terret-WebFetch/0.1",
});

/**
 * Test seams of {@linkcode createWebFetchTool}: how names resolve and how a checked address is dialled. They are
 * never reachable from config (the `tools.std` row passes none), and the floor runs on whatever they return.
 */
export interface WebFetchHooks {
  /** Resolves a name to IP address strings (default: `Deno.resolveDns` A and AAAA). */
  readonly resolve?: (name: string, signal: AbortSignal) => Promise<readonly string[]>;
  /** Opens a TCP connection to a checked address (default: `Deno.connect`). */
  readonly connect?: (address: string, port: number, signal: AbortSignal) => Promise<Deno.Conn>;
  /** Extra root certificates (PEM) TLS trusts, besides the system's. */
  readonly caCerts?: readonly string[];
}

/** The arguments of `WebFetch`. */
export interface WebFetchArgs {
  readonly url: string;
  readonly prompt: string;
  readonly offset?: number | undefined;
}

const parameters: z.ZodType<WebFetchArgs> = z.strictObject({
  url: z.string().min(1).describe("The http(s) URL to fetch"),
  prompt: z.string().describe(
    "What you want from the page (kept with the result; no model runs here)",
  ),
  offset: z.number().int().min(0).optional().describe(
    "Character position to continue a long page from",
  ),
});

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Creates `WebFetch` (`url`, `prompt`, `offset?`). For each hop (the URL, then every redirect): the scheme must be
 * http or https and carry no credentials; the host must be on `allow_domains`; a `localhost` name is refused; an IP
 * literal (every spelling) or each address the name resolves to must pass the floor (loopback, unspecified,
 * link-local, multicast, reserved, IPv4-mapped and -compatible IPv6 always refused; private and other special
 * ranges while `block_private_ranges`); then the connection goes to that checked address (TLS with the name for
 * SNI and verification) and HTTP/1.1 is spoken over it, so a second DNS answer can never be used. One deadline
 * bounds the whole call. The answer: `URL`, `Status`, `Content-Type`, `Title` lines, then the page as readable text
 * (HTML converted), a page of `max_chars` from `offset`, with notes when it was cut. The `prompt` is echoed, not run
 * through a model. Mutating (it sends a request out of the harness), parallel, approval `policy`.
 */
export function createWebFetchTool(
  options: WebFetchOptions = DEFAULT_WEB_FETCH_OPTIONS,
  hooks: WebFetchHooks = {},
): ToolDefinition<WebFetchArgs> {
  const resolve = hooks.resolve ?? resolveDns;
  const connect = hooks.connect ??
    ((address: string, port: number, signal: AbortSignal) =>
      Deno.connect({ hostname: address, port, signal }));
  return defineTool({
    name: "WebFetch",
    description:
      "Fetches an http(s) URL from an allowed domain and returns the page as readable text (HTML converted to " +
      "Markdown-like text). Private and local addresses are refused. For long pages, call again with offset. " +
      "The prompt is returned with the text; apply it yourself.",
    parameters,
    mutating: true,
    concurrency: "parallel",
    approval: "policy",
    kind: "fetch",
    async handler(args, run) {
      const deadline = AbortSignal.timeout(options.timeout_ms);
      const signal = AbortSignal.any([run.signal, deadline]);
      try {
        const { url, response } = await fetchPinned(
          args.url,
          options,
          signal,
          resolve,
          connect,
          hooks.caCerts,
        );
        return render(url, response, args, options);
      } catch (error) {
        if (deadline.aborted && !run.signal.aborted) {
          throw new TerretError(
            "Timeout",
            `Cannot fetch "${args.url}": no complete answer within ${options.timeout_ms} ms (WebFetch's total deadline)`,
          );
        }
        throw error;
      }
    },
  });
}

async function fetchPinned(
  input: string,
  options: WebFetchOptions,
  signal: AbortSignal,
  resolve: (name: string, signal: AbortSignal) => Promise<readonly string[]>,
  connect: (address: string, port: number, signal: AbortSignal) => Promise<Deno.Conn>,
  caCerts: readonly string[] | undefined,
): Promise<{ url: URL; response: PinnedResponse }> {
  let url = parseUrl(input);
  for (let hop = 0;; hop++) {
    signal.throwIfAborted();
    const address = await checkedAddress(url, options, signal, resolve);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    let conn: Deno.Conn = await connect(formatIp(address), port, signal);
    const close = (): void => {
      try {
        conn.close();
      } catch { /* already closed */ }
    };
    signal.addEventListener("abort", close, { once: true });
    try {
      if (url.protocol === "https:") {
        conn = await Deno.startTls(conn as Deno.TcpConn, {
          hostname: bare(url.hostname),
          ...(caCerts === undefined ? {} : { caCerts: [...caCerts] }),
        });
      }
      const response = await exchange(conn, {
        target: `${url.pathname}${url.search}`,
        host: url.host,
        headers: {
          "User-Agent": options.user_agent,
          Accept: "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5",
          "Accept-Encoding": "gzip, deflate",
        },
        readBody: (status) => !REDIRECTS.has(status),
        maxBytes: options.max_bytes,
      });
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null) return { url, response };
      if (hop >= options.max_redirects) {
        throw new TerretError(
          "TooManyRedirects",
          `Cannot fetch "${input}": more than ${options.max_redirects} redirects`,
        );
      }
      url = parseUrl(new URL(location, url).href);
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof TerretError) throw error;
      throw new TerretError(
        "FetchFailed",
        `Cannot fetch "${url.href}": ${(error as Error).message}`,
        { cause: error },
      );
    } finally {
      signal.removeEventListener("abort", close);
      close();
    }
  }
}

function parseUrl(input: string): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new TypeError(`Cannot fetch ${JSON.stringify(input)}: it is not a valid absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TerretError(
      "Denied",
      `Cannot fetch "${url.href}": only http and https URLs are fetched`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new TerretError(
      "Denied",
      `Cannot fetch "${url.protocol}//${url.host}": credentials in URLs are not sent`,
    );
  }
  return url;
}

function bare(hostname: string): string {
  return hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
}

/** Runs the allow list and the floor on one hop; returns the address to connect to. */
async function checkedAddress(
  url: URL,
  options: WebFetchOptions,
  signal: AbortSignal,
  resolve: (name: string, signal: AbortSignal) => Promise<readonly string[]>,
): Promise<IpAddress> {
  const host = bare(url.hostname);
  const deny = (why: string): TerretError =>
    new TerretError("Denied", `Cannot fetch "${url.href}": ${why}`);
  if (!hostAllowed(host, options.allow_domains)) {
    throw deny(
      `the host "${host}" is not on WebFetch's allow list (the tools.std row's web_fetch.allow_domains)`,
    );
  }
  if (isLocalName(host)) {
    throw deny(`"${host}" names this machine (loopback); WebFetch never fetches local addresses`);
  }
  const literal = parseIp(host);
  const addresses: IpAddress[] = [];
  if (literal !== undefined) addresses.push(literal);
  else {
    for (const text of await resolve(host, signal)) {
      const parsed = parseIp(text);
      if (parsed === undefined) {
        throw deny(`the resolver returned ${JSON.stringify(text)}, which is not an IP address`);
      }
      addresses.push(parsed);
    }
    if (addresses.length === 0) throw deny(`the name "${host}" does not resolve`);
  }
  for (const address of addresses) {
    const why = refusal(address, options.block_private_ranges);
    if (why !== undefined) {
      const what = literal === undefined
        ? `the name "${host}" resolves to ${formatIp(address)}, a ${why} address`
        : `${formatIp(address)} is a ${why} address`;
      throw deny(`${what}; WebFetch refuses local, private and special-purpose addresses`);
    }
  }
  return addresses[0]!;
}

async function resolveDns(name: string, signal: AbortSignal): Promise<readonly string[]> {
  const answers = await Promise.allSettled([
    Deno.resolveDns(name, "A", { signal }),
    Deno.resolveDns(name, "AAAA", { signal }),
  ]);
  signal.throwIfAborted();
  return answers.flatMap((answer) => answer.status === "fulfilled" ? answer.value : []);
}

function render(url: URL, response: PinnedResponse, args: WebFetchArgs, options: WebFetchOptions): {
  content: string;
  is_error: boolean;
} {
  const type = response.headers.get("content-type") ?? "";
  const mime = type.split(";")[0]!.trim().toLowerCase();
  const head = [
    `URL: ${url.href}`,
    `Status: ${response.status}`,
    `Content-Type: ${type || "(none)"}`,
  ];
  const isError = response.status >= 400;
  const textual = mime === "" || mime.startsWith("text/") || /[+/](json|xml)$/.test(mime) ||
    mime === "application/javascript";
  if (!textual) {
    head.push(
      "",
      `The body is ${response.body.length} bytes of ${mime}, which WebFetch does not show as text.`,
    );
    return { content: head.join("\n"), is_error: isError };
  }
  const charset = /charset\s*=\s*"?([A-Za-z0-9_.:-]+)/i.exec(type)?.[1] ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder();
  }
  const raw = decoder.decode(response.body);
  const html = mime === "text/html" || mime === "application/xhtml+xml" ||
    (mime === "" && /<html/i.test(raw));
  const title = html ? htmlTitle(raw) : undefined;
  if (title !== undefined) head.push(`Title: ${title}`);
  const text = html ? htmlToText(raw, url) : raw;
  const offset = args.offset ?? 0;
  const page = text.slice(offset, offset + options.max_chars);
  const notes: string[] = [];
  if (response.truncated) notes.push(`[the body was cut at ${options.max_bytes} bytes]`);
  if (offset + options.max_chars < text.length) {
    notes.push(
      `[showing characters ${offset}–${
        offset + page.length
      } of ${text.length}; call again with offset ${offset + page.length} for more]`,
    );
  }
  head.push(
    `Prompt (not run through a model here; apply it to the text): ${args.prompt}`,
    "",
    page === "" && offset > 0
      ? `(nothing past offset ${offset}; the text has ${text.length} characters)`
      : page,
  );
  return { content: [...head, ...notes.map((note) => `\n${note}`)].join("\n"), is_error: isError };
}
