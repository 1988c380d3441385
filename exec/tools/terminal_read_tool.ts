/**
 * `terminal_read`: what a named terminal printed since the last read, through the `terminals` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { TerminalsKey } from "../process/terminals.ts";
import { seam } from "./_common.ts";
import { TERMINAL_NAME } from "./terminal_open_tool.ts";

/** The arguments of `terminal_read` (defaults applied). */
export interface TerminalReadArgs {
  readonly name: string;
  readonly wait_ms: number;
}

/** The longest `wait_ms` accepted. */
export const MAX_TERMINAL_WAIT_MS = 30_000;

const parameters: z.ZodType<TerminalReadArgs> = z.strictObject({
  name: z.string().regex(TERMINAL_NAME).describe("The terminal's name"),
  wait_ms: z.number().int().min(0).max(MAX_TERMINAL_WAIT_MS).default(1000).describe(
    "When nothing new was printed yet, milliseconds to wait for output (default 1000)",
  ),
});

/**
 * Creates `terminal_read` (`name`, `wait_ms?`): the output since the previous read (waiting up to `wait_ms` when
 * there is none yet; `(no new output)` when still none), a `[N bytes dropped]` line first when the buffer
 * overflowed, and `[the program exited with code N]` last once it has. Errors: an unknown name. Non-mutating (it
 * drains only the harness's own buffer), serial, approval `never`.
 */
export function createTerminalReadTool(): ToolDefinition<TerminalReadArgs> {
  return defineTool({
    name: "terminal_read",
    description:
      "Returns what one of your terminals printed since the last read, waiting up to wait_ms for new output.",
    parameters,
    mutating: false,
    concurrency: "serial",
    approval: "never",
    kind: "read",
    async handler({ name, wait_ms }, run) {
      const terminals = seam(run.ctx, TerminalsKey, "terminal_read");
      const read = await terminals.read(run.agent_id, name, { wait: wait_ms, signal: run.signal });
      const lines: string[] = [];
      if (read.dropped > 0) lines.push(`[${read.dropped} bytes dropped before this output]`);
      lines.push(read.output === "" ? "(no new output)" : read.output);
      if (read.exit !== null) {
        lines.push(
          read.exit.signal === null
            ? `[the program exited with code ${read.exit.code}]`
            : `[the program was ended by ${read.exit.signal}]`,
        );
      }
      return lines.join("\n");
    },
  });
}
