/**
 * The `Task` tool (Claude Code's name and input schema `{description, prompt, subagent_type}`): delegates a task to
 * a child agent through the `subagents` seam and answers with the child's final text.
 *
 * @module
 */
import { z } from "zod";
import type { ToolDefinition, ToolOutput } from "../tools/tool.ts";
import type { SubagentResult, Subagents } from "./subagents.ts";

/** `Task`'s arguments. */
export interface TaskArgs {
  readonly description: string;
  readonly prompt: string;
  readonly subagent_type: string;
}

const taskArgs: z.ZodType<TaskArgs> = z.object({
  description: z.string().describe("A short (3-5 word) description of the task"),
  prompt: z.string().describe("The task for the agent to perform"),
  subagent_type: z.string().describe("The type of specialized agent to use for this task"),
}) as z.ZodType<TaskArgs>;

/**
 * Creates the `Task` tool over a subagents service. Its description lists the service's types (name and
 * description). It is `parallel` (several Task calls of one step run together under the tool barrier), approval
 * `never` and `mutating` (the child's own pipeline gates every effect it has).
 */
export function createTaskTool(subagents: Subagents): ToolDefinition<TaskArgs> {
  const listed = subagents.types.map((type) => `- ${type.name}: ${type.description}`).join("\n");
  return {
    name: "Task",
    description:
      "Launch a new agent to handle a complex, multi-step task on its own. The agent starts fresh: it does not " +
      "see this conversation, so the prompt must say everything it needs. It runs to the end of its task and " +
      "its final message comes back as this tool's result. Several Task calls in one message run in parallel.\n\n" +
      `Available agent types (subagent_type):\n${listed}`,
    parameters: taskArgs,
    concurrency: "parallel",
    approval: "never",
    mutating: true,
    kind: "think",
    handler: async (args, run) =>
      taskOutput(
        await subagents.run({
          ...args,
          session_id: run.session_id,
          agent_id: run.agent_id,
          call_id: run.call_id,
          ctx: run.ctx,
        }, { signal: run.signal }),
      ),
  };
}

/** Renders a subagent result as `Task`'s output: the child's text, a summary line, and the result as `details`. */
export function taskOutput(result: SubagentResult): ToolOutput {
  const details = {
    status: result.status,
    ...(result.session_id === undefined ? {} : { session_id: result.session_id }),
    ...(result.subagent_type === undefined ? {} : { subagent_type: result.subagent_type }),
    ...(result.session_id === undefined ? {} : { usage: result.usage }),
    ...(result.error === undefined ? {} : { error: result.error }),
  };
  if (result.status === "refused") return { content: result.text, is_error: true, details };
  const { usage } = result;
  const summary =
    `Subagent session "${result.session_id ?? "(none)"}" ${result.status} after ${usage.steps} ` +
    `step${
      usage.steps === 1 ? "" : "s"
    } (${usage.input_tokens} input, ${usage.output_tokens} output tokens)` +
    (result.error === undefined ? "." : `: ${result.error.message}`);
  const text = result.text === "" ? [] : [{ type: "text" as const, text: result.text }];
  return {
    content: [...text, { type: "text", text: summary }],
    is_error: result.status !== "completed",
    details,
  };
}
