/**
 * `trt`, the Terret command line, as a library: {@linkcode runTrt} takes arguments and injected streams and returns
 * an exit code, so the CLI is embedded and tested in-process. Verbs: `serve` (`--scoped` for the least-privilege
 * host), `dump-config`, `doctor`, `permissions`, `acp`. Run as a program (`deno run -A jsr:@terret/cli serve`), this
 * module is `trt` itself.
 *
 * @example
 * ```ts
 * import { runTrt } from "@terret/cli";
 * const out: string[] = [];
 * const code = await runTrt(["permissions", "--profile", "headless"], {
 *   stdout: (text) => out.push(text),
 *   stderr: (text) => out.push(text),
 *   env: Deno.env,
 *   cwd: Deno.cwd(),
 * });
 * console.log(code, out.join(""));
 * ```
 *
 * @module
 */
export { reportFailure, runTrt, type TrtIo, type TrtOptions, type VerbContext } from "./trt.ts";
export { type FlagSpec, parseArgs, type ParsedArgs, renderHelp, UsageError } from "./cli_args.ts";
export { runTrtProcess, TRT_CHECKS } from "./process.ts";
export { llmCheck } from "./llm_check.ts";
export { mcpCheck } from "./mcp_check.ts";
export { createSandboxCheck, sandboxCheck, type SandboxCheckOptions } from "./sandbox_check.ts";

import { runTrtProcess } from "./process.ts";
if (import.meta.main) await runTrtProcess();
