/**
 * `terminal_close`: stops a named terminal, through the `terminals` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { TerminalsKey } from "../process/terminals.ts";
import { seam } from "./_common.ts";
import { TERMINAL_NAME } from "./terminal_open_tool.ts";

/** The arguments of `terminal_close`. */
export interface TerminalCloseArgs {
  readonly name: string;
}

const parameters: z.ZodType<TerminalCloseArgs> = z.strictObject({
  name: z.string().regex(TERMINAL_NAME).describe("The terminal's name"),
});

/**
 * Creates `terminal_close` (`name`): kills the terminal's whole process group and forgets the name; answers
 * `Closed terminal "<name>"`, or `No terminal named "<name>" is open` (idempotent, not an error). Mutating,
 * serial, approval `policy`.
 */
export function createTerminalCloseTool(): ToolDefinition<TerminalCloseArgs> {
  return defineTool({
    name: "terminal_close",
    description: "Stops one of your terminals (kills its program) and frees its name.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "policy",
    kind: "execute",
    async handler({ name }, run) {
      const terminals = seam(run.ctx, TerminalsKey, "terminal_close");
      const open = terminals.list(run.agent_id).some((info) => info.name === name);
      await terminals.close(run.agent_id, name);
      return open ? `Closed terminal "${name}"` : `No terminal named "${name}" is open`;
    },
  });
}
