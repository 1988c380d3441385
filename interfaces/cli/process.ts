/**
 * Runs `trt` as this process: its arguments, standard streams, environment and working directory, with SIGINT and
 * SIGTERM wired to a graceful stop, then exits with the verb's code.
 *
 * @module
 */
import { COMPOSITION_CHECKS, type DoctorCheck } from "@terret/terret";
import { approvalsCheck } from "./approvals_check.ts";
import { cachesCheck } from "./caches_check.ts";
import { llmCheck } from "./llm_check.ts";
import { postgresCheck } from "./postgres_check.ts";
import { sandboxCheck } from "./sandbox_check.ts";
import { mcpCheck } from "./mcp_check.ts";
import { runTrt } from "./trt.ts";

/**
 * The doctor checks `trt` runs, in order: the composition checks, the model adapters' key check, the PostgreSQL
 * store's connection, schema and clock check, the execution world's sandbox check, where each stdio MCP server runs,
 * the approval stance, then the history cache against the agents' cap (all `atServe` checks, so `serve` also says
 * when a model row has no key, when the sandbox row's provider cannot run on this machine and which row to patch,
 * when an MCP server runs unconfined, when approvals are disabled so policy and always tools are denied, and when
 * more agents may be resident than the history cache holds).
 */
export const TRT_CHECKS: readonly DoctorCheck[] = [
  ...COMPOSITION_CHECKS,
  llmCheck,
  postgresCheck,
  sandboxCheck,
  mcpCheck,
  approvalsCheck,
  cachesCheck,
];

/** Runs `trt` with `Deno.args` and exits the process with its code. */
export async function runTrtProcess(): Promise<never> {
  const encoder = new TextEncoder();
  const write = (stream: { writeSync(bytes: Uint8Array): number }) => (text: string): void => {
    const bytes = encoder.encode(text);
    let offset = 0;
    while (offset < bytes.length) offset += stream.writeSync(bytes.subarray(offset));
  };
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const onSignal = (): void => stop.abort();
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  let code: number;
  try {
    code = await runTrt(Deno.args, {
      stdout: write(Deno.stdout),
      stderr: write(Deno.stderr),
      stdin: Deno.stdin.readable,
      stdoutBytes: Deno.stdout.writable,
      env: { get: (name) => Deno.env.get(name) },
      cwd: Deno.cwd(),
      signal: stop.signal,
    }, { checks: TRT_CHECKS });
  } catch (error) {
    write(Deno.stderr)(`trt: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
    code = 1;
  }
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  Deno.exit(code);
}
