/**
 * The host variables a stdio MCP server inherits by default: what a Deno- or npm-launched server needs to find
 * its package cache, trust the host's CAs and reach the registry, and nothing that is a secret by itself.
 *
 * @module
 */
import type { Logger } from "@terret/hames";

/**
 * The default `inherit_env` of a stdio `mcp.<server>` row:
 *
 * - `DENO_DIR`: Deno's cache (a `deno run npm:…` server finds the packages fetched there);
 * - `DENO_CERT`, `SSL_CERT_FILE`, `SSL_CERT_DIR`, `NODE_EXTRA_CA_CERTS`: CAs to trust (a TLS-intercepting proxy's);
 * - `NPM_CONFIG_REGISTRY`: the npm registry (a mirror);
 * - `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY` and their lowercase forms: the proxy, and the hosts that bypass it.
 *
 * A URL-valued variable (the proxies and the registry) whose value carries credentials (`user:pass@`) is not
 * inherited: a row that means to hand them to the server says so in its `env`
 * (`env: { HTTPS_PROXY: !env HTTPS_PROXY }`).
 */
export const MCP_RUNTIME_ENV: readonly string[] = Object.freeze([
  "DENO_DIR",
  "DENO_CERT",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "NPM_CONFIG_REGISTRY",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "https_proxy",
  "http_proxy",
  "no_proxy",
]);

const URL_VALUED = new Set([
  "NPM_CONFIG_REGISTRY",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "https_proxy",
  "http_proxy",
]);

/**
 * The inherited part of a stdio server's environment: each of `names` that is set on the host, except a URL that
 * carries credentials (logged at `warn`, by name only: the value never reaches the log).
 *
 * @param server the server name (for the log line)
 * @param names the row's `inherit_env`
 * @param read reads one host variable (undefined when unset or not readable)
 * @param logger where a withheld variable is reported
 */
export function inheritedEnv(
  server: string,
  names: readonly string[],
  read: (name: string) => string | undefined,
  logger: Logger,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = read(name);
    if (value === undefined) continue;
    if (URL_VALUED.has(name) && carriesCredentials(value)) {
      logger.log(
        "warn",
        `Not passing "${name}" to MCP server "${server}": its URL carries credentials; set it in the row's env to pass it`,
        { server, variable: name },
      );
      continue;
    }
    env[name] = value;
  }
  return env;
}

/** Reads a host variable; undefined when it is unset or the process may not read it. */
export function readHostEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function carriesCredentials(value: string): boolean {
  try {
    const url = new URL(value.includes("://") ? value : `http://${value}`);
    return url.username !== "" || url.password !== "";
  } catch {
    // Not a URL we can read: withhold it when it might hold credentials.
    return value.includes("@");
  }
}
