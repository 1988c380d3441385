/**
 * `TodoWrite`: the agent's plan, as Claude Code keeps it. It holds no state: it validates the whole list and echoes
 * it back; the durable `tool/call` (with its successful `tool/result`) is the storage, so the current plan is the
 * last successful TodoWrite call in the log.
 *
 * @module
 */
import { defineTool, type ToolDefinition } from "@terret/core";
import { z } from "zod";

/** A todo's status. */
export type TodoStatus = "pending" | "in_progress" | "completed";

/** One item of the plan (Claude Code's shape, exactly). */
export interface TodoItem {
  /** What to do, imperative ("Run the tests"). */
  readonly content: string;
  readonly status: TodoStatus;
  /** The same, as it is being done ("Running the tests"), shown while in progress. */
  readonly activeForm: string;
}

/** The arguments of `TodoWrite`. */
export interface TodoWriteArgs {
  readonly todos: readonly TodoItem[];
}

const text = (field: string) =>
  z.string({
    error: (issue) =>
      issue.input === undefined ? `${field} is required` : `${field} must be a string`,
  }).trim().min(1, { error: `${field} must not be empty` });

const item = z.strictObject({
  content: text("content").describe("What to do, imperative (e.g. Run the tests)"),
  status: z.enum(["pending", "in_progress", "completed"], {
    error: 'status must be "pending", "in_progress" or "completed"',
  }),
  activeForm: text("activeForm").describe("The same as it is being done (e.g. Running the tests)"),
});

const parameters: z.ZodType<TodoWriteArgs> = z.strictObject({
  todos: z.array(item).describe("The whole updated list, in order (it replaces the previous one)"),
}).superRefine((args, ctx) => {
  const active = args.todos.flatMap((todo, index) => todo.status === "in_progress" ? [index] : []);
  if (active.length > 1) {
    ctx.addIssue({
      code: "custom",
      path: ["todos"],
      message: `at most one item may be in_progress, got ${active.length} (${
        active.map((index) => `todos.${index}`).join(", ")
      }): mark the others pending or completed`,
    });
  }
}) as z.ZodType<TodoWriteArgs>;

const MARK: Readonly<Record<TodoStatus, string>> = {
  completed: "[x]",
  in_progress: "[~]",
  pending: "[ ]",
};

/** Renders a plan as TodoWrite's answer shows it. */
export function renderTodos(todos: readonly TodoItem[]): string {
  if (todos.length === 0) return "Todo list cleared (no items)";
  const count = (status: TodoStatus) => todos.filter((todo) => todo.status === status).length;
  const lines = todos.map((todo) =>
    `${MARK[todo.status]} ${todo.status === "in_progress" ? todo.activeForm : todo.content}`
  );
  return `Todo list updated (${todos.length} item${todos.length === 1 ? "" : "s"}: ${
    count("completed")
  } completed, ${count("in_progress")} in progress, ${count("pending")} pending):\n${
    lines.join("\n")
  }`;
}

/**
 * Creates `TodoWrite` (`todos: [{content, status, activeForm}]`, Claude Code's schema exactly): validates the whole
 * list — non-empty `content` and `activeForm`, `status` one of `pending | in_progress | completed`, at most one item
 * `in_progress`, no other field — and answers with the list rendered (`[x]` completed, `[~]` in progress shown by
 * its `activeForm`, `[ ]` pending). A bad list is an `is_error` result naming the problem, and is not the plan.
 * Holds no state. Not mutating, serial, approval `never`.
 */
export function createTodoWriteTool(): ToolDefinition<TodoWriteArgs> {
  return defineTool({
    name: "TodoWrite",
    description:
      "Creates and updates your task list for the current work: send the whole list each time. Use it for work " +
      "of three or more steps, mark an item in_progress before starting it (only one at a time) and completed " +
      "as soon as it is done. content is imperative (Run the tests); activeForm is the same in progress " +
      "(Running the tests).",
    parameters,
    mutating: false,
    concurrency: "serial",
    approval: "never",
    kind: "think",
    handler(args) {
      return renderTodos(args.todos);
    },
  });
}
