/**
 * The web console's static assets (docs/console.md): the page at `/` and its script and stylesheet under
 * `/console/`, served on the socket's listener when the row's `console` key is on. The page is one more protocol v1
 * client: it reads `GET /v1/agents` and opens `/v1/agents/{id}/stream` with the token it is given.
 *
 * @module
 */
import { CONSOLE_FILES } from "./_console_assets.ts";

/**
 * The console's Content-Security-Policy: nothing but same-origin scripts, styles, connections and images (plus data:
 * images); no inline script, no framing, no form posts elsewhere.
 */
export const CONSOLE_CSP: string = "default-src 'none'; script-src 'self'; style-src 'self'; " +
  "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

interface Asset {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly type: string;
  readonly etag: string;
}

/**
 * Answers the console's paths: `/` (and `/console/`) with the page, `/console/<file>` with a file. Built once per
 * server; each asset carries a strong ETag (the SHA-256 of its bytes), and `If-None-Match` gets `304`.
 *
 * Contract: `answer` returns `undefined` for a path the console does not own (the caller routes it on), and a
 * `404` for an unknown file under `/console/`. Every answer carries the CSP, `nosniff`, `no-referrer` and
 * `cache-control: no-cache` (revalidate by ETag). Only `GET` and `HEAD` are answered.
 */
export class ConsoleAssets {
  readonly #assets: ReadonlyMap<string, Asset>;

  private constructor(assets: ReadonlyMap<string, Asset>) {
    this.#assets = assets;
  }

  /** Hashes the embedded files. */
  static async load(): Promise<ConsoleAssets> {
    const assets = new Map<string, Asset>();
    for (const [name, text] of Object.entries(CONSOLE_FILES)) {
      const body = new TextEncoder().encode(text);
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
      const hex = Array.from(digest.slice(0, 16), (byte) => byte.toString(16).padStart(2, "0"))
        .join("");
      const extension = name.slice(name.lastIndexOf(".") + 1);
      assets.set(name, {
        body,
        type: TYPES[extension] ?? "application/octet-stream",
        etag: `"${hex}"`,
      });
    }
    return new ConsoleAssets(assets);
  }

  /** The answer for a console path, or `undefined` when `pathname` is not the console's. */
  answer(method: string, pathname: string, headers: Headers): Response | undefined {
    if (method !== "GET" && method !== "HEAD") return undefined;
    let name: string;
    if (pathname === "/" || pathname === "/console" || pathname === "/console/") {
      name = "index.html";
    } else if (pathname.startsWith("/console/")) name = pathname.slice("/console/".length);
    else return undefined;
    const asset = this.#assets.get(name);
    const common = {
      "content-security-policy": CONSOLE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
      "cache-control": "no-cache",
    };
    if (asset === undefined) {
      return new Response("not found", {
        status: 404,
        headers: { ...common, "content-type": "text/plain; charset=utf-8" },
      });
    }
    const headersOut = { ...common, "content-type": asset.type, etag: asset.etag };
    if (headers.get("if-none-match")?.split(",").some((tag) => tag.trim() === asset.etag)) {
      return new Response(null, { status: 304, headers: headersOut });
    }
    return new Response(method === "HEAD" ? null : asset.body, {
      status: 200,
      headers: headersOut,
    });
  }
}
