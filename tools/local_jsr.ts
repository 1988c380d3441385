// deno-lint-ignore-file no-console
/**
 * A local JSR registry: `deno publish` uploads to it (it answers the publish API JSR answers), and it serves what was
 * published laid out as JSR serves it (`/@scope/name/meta.json`, `/@scope/name/<version>_meta.json` with the
 * manifest's sha256 hashes and the exports, and the files under `/@scope/name/<version>/`). Because the packages
 * come from a real `deno publish`, the registry holds exactly the file set `deno publish --dry-run` lists, with
 * import-map specifiers unfurled the way JSR receives them.
 *
 * Point Deno at it with `JSR_URL=<url>`. Run as a script it publishes the workspace and serves it until stopped:
 * `deno run -A tools/local_jsr.ts [--port 4873] [--dir DIR]`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A running local registry. */
export interface LocalJsr extends AsyncDisposable {
  /** The base URL (`http://127.0.0.1:<port>/`), what `JSR_URL` is set to. */
  readonly url: string;
  /** The directory the published packages are stored in. */
  readonly dir: string;
  /** Publishes the workspace member at `memberDir` with a real `deno publish`. */
  publish(memberDir: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** Stops serving. */
  close(): Promise<void>;
}

/** The workspace root of this checkout. */
export const WORKSPACE_ROOT: string = fileURLToPath(new URL("../", import.meta.url));

/** The members of the workspace at `root`, root first, as directories. */
export async function workspaceMembers(root: string = WORKSPACE_ROOT): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(join(root, "deno.json"))) as {
    workspace?: string[];
  };
  return [root, ...(config.workspace ?? []).map((member) => join(root, member))];
}

/** Starts a registry on 127.0.0.1 (port 0 unless given) storing packages in `dir` (a new temp dir unless given). */
export async function startLocalJsr(options: { dir?: string; port?: number } = {}): Promise<
  LocalJsr
> {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "terret-jsr-" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    (request) => handle(dir, request),
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const close = async (): Promise<void> => {
    await server.shutdown();
  };
  return {
    url,
    dir,
    close,
    [Symbol.asyncDispose]: close,
    async publish(memberDir: string, publishOptions: { signal?: AbortSignal } = {}) {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["publish", "--token", "local", "--allow-dirty", "--no-check"],
        cwd: memberDir,
        env: { JSR_URL: url, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
        stdout: "piped",
        stderr: "piped",
        ...(publishOptions.signal === undefined ? {} : { signal: publishOptions.signal }),
      }).output();
      if (output.code !== 0) {
        const text = new TextDecoder().decode(output.stderr) +
          new TextDecoder().decode(output.stdout);
        throw new Error(`Cannot publish "${memberDir}" to ${url}: deno publish said:\n${text}`);
      }
    },
  };
}

/** Publishes every member of the workspace at `root` into `registry`, two at a time. */
export async function publishWorkspace(
  registry: LocalJsr,
  root: string = WORKSPACE_ROOT,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  const queue = await workspaceMembers(root);
  const worker = async (): Promise<void> => {
    for (let member = queue.shift(); member !== undefined; member = queue.shift()) {
      await registry.publish(member, options);
    }
  };
  await Promise.all([worker(), worker()]);
}

/**
 * Checks that the registry at `url` answers for package `name` (`@scope/name`), so a run against an unreachable
 * `JSR_URL` fails with one clear sentence instead of a module resolution trace.
 *
 * @throws {Error} naming the URL, the failure and what to do
 */
export async function probeRegistry(url: string, name: string): Promise<void> {
  const meta = `${name}/meta.json`;
  let response: Response;
  try {
    response = await fetch(new URL(meta, url), { signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new Error(
      `Cannot reach the JSR registry at "${url}" (JSR_URL): fetching "${meta}" failed: ${
        reason(error)
      }; start it (deno run -A tools/local_jsr.ts) or unset JSR_URL to use https://jsr.io/`,
    );
  }
  await response.body?.cancel();
  if (!response.ok) {
    throw new Error(
      `Cannot use the JSR registry at "${url}" (JSR_URL): "${meta}" answered HTTP ${response.status}; publish the workspace to it first (deno run -A tools/local_jsr.ts)`,
    );
  }
}

function reason(error: unknown): string {
  const cause = (error as Error).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}

async function handle(dir: string, request: Request): Promise<Response> {
  const path = decodeURIComponent(new URL(request.url).pathname);
  const api = path.match(/^\/api\/scopes\/([^/]+)\/packages\/([^/]+)(?:\/versions\/([^/]+))?$/);
  if (api !== null) {
    const [, scope, name, version] = api as unknown as [string, string, string, string?];
    if (request.method === "POST" && version !== undefined) {
      await store(dir, scope, name, version, request);
      return Response.json({ id: `${scope}-${name}-${version}`, status: "success", error: null });
    }
    if (version !== undefined) {
      // Always "not yet published": a republish (the broken copy) replaces the version.
      return Response.json({ code: "versionNotFound", message: "version not found" }, {
        status: 404,
      });
    }
    return Response.json({ scope, name });
  }
  if (path.startsWith("/api/publish_status/")) {
    return Response.json({ id: path.slice(20), status: "success", error: null });
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("method not allowed", { status: 405 });
  }
  const file = join(dir, path);
  if (!file.startsWith(dir) || path.includes("..")) return new Response("", { status: 404 });
  try {
    const body = await Deno.readFile(file);
    return new Response(body, { headers: { "content-type": contentType(path) } });
  } catch {
    return new Response("not found", { status: 404 });
  }
}

function contentType(path: string): string {
  if (/\.(ts|mts|tsx)$/.test(path)) return "application/typescript";
  if (/\.(js|mjs)$/.test(path)) return "application/javascript";
  if (path.endsWith(".json")) return "application/json";
  return "text/plain";
}

async function store(
  dir: string,
  scope: string,
  name: string,
  version: string,
  request: Request,
): Promise<void> {
  const gz = request.body ?? new Blob([]).stream();
  const tar = new Uint8Array(
    await new Response(gz.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
  );
  const packageDir = join(dir, `@${scope}`, name);
  const versionDir = join(packageDir, version);
  await Deno.remove(versionDir, { recursive: true }).catch(() => {});
  const manifest: Record<string, { size: number; checksum: string }> = {};
  let exports: Record<string, string> = {};
  for (const entry of untar(tar)) {
    const relative = entry.name.replace(/^\.?\//, "");
    const target = join(versionDir, relative);
    await Deno.mkdir(dirname(target), { recursive: true });
    await Deno.writeFile(target, entry.data);
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", entry.data));
    manifest[`/${relative}`] = {
      size: entry.data.length,
      checksum: `sha256-${Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("")}`,
    };
    if (relative === "deno.json" || relative === "jsr.json") {
      const config = JSON.parse(new TextDecoder().decode(entry.data)) as {
        exports?: string | Record<string, string>;
      };
      exports = typeof config.exports === "string" ? { ".": config.exports } : config.exports ?? {};
    }
  }
  await Deno.writeTextFile(
    join(packageDir, `${version}_meta.json`),
    JSON.stringify({ manifest, exports }),
  );
  await Deno.writeTextFile(
    join(packageDir, "meta.json"),
    JSON.stringify({ scope, name, latest: version, versions: { [version]: {} } }),
  );
}

/** The regular files of a ustar/GNU tar archive (GNU long names included). */
function* untar(
  tar: Uint8Array<ArrayBuffer>,
): Generator<{ name: string; data: Uint8Array<ArrayBuffer> }> {
  const decoder = new TextDecoder();
  const text = (from: number, length: number): string =>
    decoder.decode(tar.subarray(from, from + length)).replace(/\0.*$/s, "");
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    if (tar.subarray(offset, offset + 512).every((byte) => byte === 0)) break;
    const size = parseInt(text(offset + 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(tar[offset + 156] ?? 0);
    const prefix = text(offset + 257, 6).startsWith("ustar") ? text(offset + 345, 155) : "";
    const name = longName ?? (prefix === "" ? "" : `${prefix}/`) + text(offset, 100);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "L") {
      longName = decoder.decode(data).replace(/\0.*$/s, "");
      continue;
    }
    longName = undefined;
    if (type === "0" || type === "\0") yield { name, data };
  }
}

if (import.meta.main) {
  const args = Deno.args;
  const port = Number(args[args.indexOf("--port") + 1] ?? 0);
  const dir = args.includes("--dir") ? args[args.indexOf("--dir") + 1] : undefined;
  const registry = await startLocalJsr({
    ...(args.includes("--port") ? { port } : {}),
    ...(dir === undefined ? {} : { dir }),
  });
  await publishWorkspace(registry);
  console.log(`local JSR serving ${registry.dir} at ${registry.url} (JSR_URL=${registry.url})`);
}
