/**
 * `terminal_input`: types into a named terminal, through the `terminals` seam.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";
import { TerminalsKey } from "../process/terminals.ts";
import { seam } from "./_common.ts";
import { TERMINAL_NAME } from "./terminal_open_tool.ts";

/** The arguments of `terminal_input` (defaults applied). */
export interface TerminalInputArgs {
  readonly name: string;
  readonly text: string;
  readonly enter: boolean;
}

const parameters: z.ZodType<TerminalInputArgs> = z.strictObject({
  name: z.string().regex(TERMINAL_NAME).describe("The terminal's name"),
  text: z.string().describe('What to type; control characters work (e.g. "\\u0003" is Ctrl-C)'),
  enter: z.boolean().default(false).describe("Press Enter after the text (default false)"),
});

/**
 * Creates `terminal_input` (`name`, `text`, `enter?`): types `text` (then a carriage return with `enter`) into the
 * calling agent's terminal and answers `Sent N characters to "<name>"`. Errors: an unknown name, a program that has
 * exited. Mutating, serial, approval `policy`.
 */
export function createTerminalInputTool(): ToolDefinition<TerminalInputArgs> {
  return defineTool({
    name: "terminal_input",
    description:
      "Types text into one of your terminals (set enter to press Enter after it). Read the response with " +
      "terminal_read.",
    parameters,
    mutating: true,
    concurrency: "serial",
    approval: "policy",
    kind: "execute",
    handler({ name, text, enter }, run) {
      const typed = enter ? `${text}\r` : text;
      seam(run.ctx, TerminalsKey, "terminal_input").input(run.agent_id, name, typed);
      return `Sent ${typed.length} character${typed.length === 1 ? "" : "s"} to "${name}"`;
    },
  });
}
