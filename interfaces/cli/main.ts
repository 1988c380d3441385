/**
 * The `trt` entry point: `deno run -A interfaces/cli/main.ts <verb>` (or `deno task trt <verb>`,
 * `deno task serve`). `deno run -A jsr:@terret/cli <verb>` runs the same through the package's `mod.ts`.
 *
 * @module
 */
import { runTrtProcess } from "./process.ts";

if (import.meta.main) await runTrtProcess();
