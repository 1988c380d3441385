/**
 * Small host-command helpers for the providers' own bookkeeping (`docker run`, `docker rm`, `deno info`): bounded
 * in time, with a cleared environment, never for the programs agents run (those go through `wrap`).
 *
 * @module
 */
import { TerretError } from "../errors.ts";
import { isAbsolute } from "node:path";

/** What {@linkcode runHostCommand} returns. */
export interface HostCommandOutput {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options for {@linkcode runHostCommand}. */
export interface HostCommandOptions {
  /** The complete environment (the host's is cleared). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Kill the command after this long (default 30 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Runs `program` with `args` and collects its output.
 *
 * @throws {TerretError} `Timeout` when it ran past `timeoutMs`; `NotFound` when the program cannot be started
 * @throws {DOMException} `AbortError` when `signal` aborted it
 */
export async function runHostCommand(
  program: string,
  args: readonly string[],
  options: HostCommandOptions = {},
): Promise<HostCommandOutput> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(program, {
      args: [...args],
      env: { ...options.env },
      clearEnv: true,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal,
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new TerretError("NotFound", `Cannot run "${program}": no such program`, {
        cause: error,
      });
    }
    throw error;
  }
  options.signal?.throwIfAborted();
  if (timeout.aborted) {
    throw new TerretError(
      "Timeout",
      `Cannot run "${program} ${args[0] ?? ""}": no answer within ${timeoutMs} ms`,
    );
  }
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Reads a host environment variable, or `undefined` (also when env access is not permitted). */
export function hostEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * Resolves a program name to an absolute executable path through the host's `PATH` (a name holding `/` must be
 * absolute already).
 *
 * @throws {TerretError} `NotFound`
 */
export async function resolveExecutable(name: string): Promise<string> {
  const candidates = name.includes("/")
    ? [name]
    : (hostEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(":").filter(isAbsolute).map((
      dir,
    ) => `${dir}/${name}`);
  for (const candidate of candidates) {
    if (!isAbsolute(candidate)) continue;
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new TerretError("NotFound", `Cannot find the program "${name}" on this machine`, {
    details: { name },
  });
}

/** A random lowercase hex id of `bytes` bytes. */
export function randomId(bytes = 8): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}
