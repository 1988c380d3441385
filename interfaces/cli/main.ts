// deno-lint-ignore-file no-console
/**
 * The `trt` entry point: `deno run -A interfaces/cli/main.ts <verb>` (or `deno task serve`). Wires
 * {@linkcode runTrt} to this process: its arguments, standard streams, environment and working directory, and
 * SIGINT/SIGTERM to a graceful stop.
 *
 * @module
 */
import { COMPOSITION_CHECKS, type DoctorCheck } from "@terret/terret";
import { runTrt } from "./trt.ts";

/**
 * The doctor checks `trt` runs, in order. The execution world appends its sandbox check here (an `atServe` check,
 * so `serve` also says when no isolating provider works on this machine and which row to patch).
 */
const CHECKS: readonly DoctorCheck[] = [...COMPOSITION_CHECKS];

if (import.meta.main) {
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
      env: { get: (name) => Deno.env.get(name) },
      cwd: Deno.cwd(),
      signal: stop.signal,
    }, { checks: CHECKS });
  } catch (error) {
    console.error("trt: internal error:", error);
    code = 1;
  }
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
  Deno.exit(code);
}
