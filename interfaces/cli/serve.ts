/**
 * `trt serve`: boot the profile and keep it up until the stop signal, then dispose the context. With `--scoped`,
 * re-run this program under the profile's least-privilege permissions plus `--no-prompt`, forwarding its output
 * and the stop signal.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  acquireHomeLock,
  bootResolved,
  type DoctorFinding,
  ensureHome,
  permissionFlags,
  type PreparedRow,
  type ResolvedProfile,
} from "@terret/terret";
import { type WsService, WsServiceKey } from "@terret/ws";
import { SessionStoreKey } from "@terret/core";
import { PostgresSessionStore } from "@terret/core/postgres";
import { profilePlan } from "./inspect.ts";
import type { VerbContext } from "./trt.ts";

/** `trt serve`. */
export async function serveVerb(context: VerbContext): Promise<number> {
  const resolved = await context.resolve();
  await ensureHome(resolved.home);
  if (context.args.booleans.has("scoped")) return await serveScoped(context, resolved);
  // One server per home: a second one would interleave turns of the same agents in the same sessions.
  await using _lock = await acquireHomeLock(resolved.home);
  return await serveLocked(context, resolved);
}

async function serveLocked(context: VerbContext, resolved: ResolvedProfile): Promise<number> {
  const { io } = context;
  const booted = await bootResolved(resolved, {
    ...context.resolveOptions,
    allowConfigCode: context.allowConfigCode,
  });
  try {
    await reportAtServe(context, resolved, [...booted.rows]);
    const mounted = booted.rows.map((row) => row.composed.id);
    const disabled = resolved.rows.filter((row) => row.disabled).map((row) => row.id);
    const where = resolved.profile.template ? "shipped template" : resolved.profile.file;
    io.stdout(
      `trt serve: booted profile "${resolved.profile.name}" (${where}): ${mounted.length} of ${resolved.rows.length} rows mounted${
        mounted.length > 0 ? ` (${mounted.join(", ")})` : ""
      }\n`,
    );
    if (disabled.length > 0) io.stdout(`trt serve: disabled rows: ${disabled.join(", ")}\n`);
    const store = booted.ctx.maybe(SessionStoreKey);
    if (store instanceof PostgresSessionStore) {
      io.stdout(
        `trt serve: fleet node "${store.node}" on the PostgreSQL session store "${store.url}" (schema "${store.schema}")\n`,
      );
    }
    io.stdout(`trt serve: ${interfaceLine(resolved, mounted)}\n`);
    const ws = booted.ctx.maybe(WsServiceKey);
    if (ws !== undefined) { for (const line of socketLines(ws)) io.stdout(`trt serve: ${line}\n`); }
    io.stdout("trt serve: running until SIGINT or SIGTERM\n");
    await stopped(io.signal);
  } finally {
    await booted.dispose();
  }
  io.stdout("trt serve: stopped\n");
  return 0;
}

function interfaceLine(resolved: ResolvedProfile, mounted: readonly string[]): string {
  // interfaces.acp holds settings for `trt acp`; it serves nothing here.
  const interfaces = mounted.filter((id) =>
    id.startsWith("interfaces.") && id !== "interfaces.acp"
  );
  if (interfaces.length > 0) return `serving through ${interfaces.join(", ")}`;
  const off = resolved.rows.filter((row) => row.id.startsWith("interfaces.") && row.disabled);
  const hint = off.length > 0
    ? ` (${off.map((row) => `"${row.id}"`).join(", ")} ${
      off.length === 1 ? "is" : "are"
    } disabled; enable ${
      off.length === 1 ? "it" : "one"
    } with a patch once its plugin is available)`
    : " (no interfaces.* row in the profile)";
  return `no interface row is mounted, so nothing is served${hint}`;
}

/**
 * Where the socket listens and how clients authenticate. A token generated at this start is printed here, once;
 * later starts say where it is stored, never what it is.
 */
function socketLines(ws: WsService): string[] {
  const lines = [
    `the WebSocket event stream is at ${ws.url}/v1/agents/<agent_id>/stream (row interfaces.ws, docs/protocol.md)`,
  ];
  if (ws.console !== undefined) {
    lines.push(
      `the web console is at ${ws.console} (sign in with a socket token; docs/console.md)`,
    );
  }
  const tokens = ws.tokens();
  if (tokens.generated !== undefined && tokens.file !== undefined) {
    lines.push(
      `generated a socket token and stored it in ${tokens.file.path} (mode 0600); it is not printed again: ${tokens.generated}`,
    );
  } else if (tokens.file !== undefined) {
    lines.push(`clients authenticate with the token stored in ${tokens.file.path}`);
  }
  if (tokens.env !== undefined) lines.push(`clients authenticate with the token in $${tokens.env}`);
  if (tokens.configured > 0) {
    lines.push(
      `clients authenticate with the ${tokens.configured} token${
        tokens.configured === 1 ? "" : "s"
      } the row lists`,
    );
  }
  return lines;
}

/** Runs the `atServe` doctor checks against the booted rows and prints their warnings and errors. */
async function reportAtServe(
  context: VerbContext,
  resolved: ResolvedProfile,
  prepared: PreparedRow[],
): Promise<void> {
  const findings: DoctorFinding[] = [];
  for (const check of context.checks.filter((candidate) => candidate.atServe === true)) {
    try {
      findings.push(
        ...await check.run({
          resolved,
          env: context.io.env,
          allowConfigCode: context.allowConfigCode,
          prepared,
          atServe: true,
        }),
      );
    } catch (error) {
      findings.push({
        level: "error",
        check: check.name,
        message: `the check failed: ${(error as Error).message}`,
      });
    }
  }
  for (const finding of findings) {
    if (finding.level !== "warning" && finding.level !== "error") continue;
    context.io.stderr(`trt serve: ${finding.level}: ${finding.check}: ${finding.message}\n`);
  }
}

function stopped(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise(() => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

/** `trt serve --scoped`: re-run under exactly the planned permissions plus `--no-prompt`. */
async function serveScoped(context: VerbContext, resolved: ResolvedProfile): Promise<number> {
  const { io } = context;
  const flags = [...permissionFlags(await profilePlan(context, resolved)), "--no-prompt"];
  const self = context.options.self ?? { execPath: Deno.execPath(), mainModule: Deno.mainModule };
  const config = await findConfig(self.mainModule);
  const profile = context.profile.includes("/") || /\.ya?ml$/.test(context.profile)
    ? resolved.profile.file
    : context.profile;
  const args = [
    "run",
    ...flags,
    ...(config === undefined ? [] : ["--config", config]),
    self.mainModule,
    "serve",
    "--profile",
    profile,
    "--home",
    resolved.home,
    ...resolved.layers.filter((layer) => layer.name === "--patch").flatMap((layer) => [
      "--patch",
      layer.file,
    ]),
    ...(context.allowConfigCode ? ["--allow-config-code"] : []),
  ];
  io.stderr(`trt serve: re-running under scoped permissions: ${flags.join(" ")}\n`);
  const child = new Deno.Command(self.execPath, {
    args,
    cwd: io.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const forward = (): void => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
  };
  io.signal?.addEventListener("abort", forward, { once: true });
  if (io.signal?.aborted) forward();
  try {
    const [status] = await Promise.all([
      child.status,
      pump(child.stdout, io.stdout),
      pump(child.stderr, io.stderr),
    ]);
    return status.code;
  } finally {
    io.signal?.removeEventListener("abort", forward);
  }
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  write: (text: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) write(decoder.decode(chunk, { stream: true }));
  const tail = decoder.decode();
  if (tail !== "") write(tail);
}

/**
 * The config governing a local main module, so the child resolves imports as this process did: the nearest
 * `deno.json` declaring a workspace above it (an unrelated workspace further up, e.g. one in `/tmp`, never wins),
 * else the nearest `deno.json`.
 */
async function findConfig(mainModule: string): Promise<string | undefined> {
  if (!mainModule.startsWith("file:")) return undefined;
  let nearest: string | undefined;
  let workspace: string | undefined;
  for (let dir = dirname(fileURLToPath(mainModule));; dir = dirname(dir)) {
    const file = join(dir, "deno.json");
    try {
      const text = await Deno.readTextFile(file);
      nearest ??= file;
      if (/"workspace"\s*:/.test(text)) workspace ??= file;
    } catch {
      // No config here; keep walking up.
    }
    if (dirname(dir) === dir) return workspace ?? nearest;
  }
}
