import assert from "node:assert/strict";
import { mountTools, textOf } from "./_testing.ts";

const todo = (content: string, status: string, activeForm = `${content}ing`) => ({
  content,
  status,
  activeForm,
});

Deno.test("TodoWrite echoes a valid list, and an empty one clears the plan", async () => {
  await using w = await mountTools();
  const valid = await w.call("TodoWrite", {
    todos: [
      todo("Run the tests", "completed", "Running the tests"),
      todo("Fix the bug", "in_progress", "Fixing the bug"),
      todo("Commit", "pending", "Committing"),
    ],
  });
  assert.deepStrictEqual([valid.is_error, textOf(valid)], [
    false,
    "Todo list updated (3 items: 1 completed, 1 in progress, 1 pending):\n[x] Run the tests\n" +
    "[~] Fixing the bug\n[ ] Commit",
  ]);
  const cleared = await w.call("TodoWrite", { todos: [] });
  assert.deepStrictEqual([cleared.is_error, textOf(cleared)], [
    false,
    "Todo list cleared (no items)",
  ]);
});

Deno.test("TodoWrite: each invalid list is an is_error result naming the problem", async () => {
  await using w = await mountTools();
  const cases: [unknown, string][] = [
    [
      { todos: [todo("A", "in_progress"), todo("B", "pending"), todo("C", "in_progress")] },
      "todos: at most one item may be in_progress, got 2 (todos.0, todos.2): mark the others pending or completed",
    ],
    [
      { todos: [{ status: "pending", activeForm: "Aing" }] },
      "todos.0.content: content is required",
    ],
    [{ todos: [todo("  ", "pending")] }, "todos.0.content: content must not be empty"],
    [
      { todos: [todo("A", "pending"), todo("B", "done")] },
      'todos.1.status: status must be "pending", "in_progress" or "completed"',
    ],
    [
      { todos: [{ content: "A", status: "pending" }] },
      "todos.0.activeForm: activeForm is required",
    ],
    [{ todos: [{ ...todo("A", "pending"), id: "1" }] }, 'todos.0: Unrecognized key: "id"'],
    [{}, "todos: Invalid input: expected array, received undefined"],
  ];
  for (const [args, problem] of cases) {
    const result = await w.call("TodoWrite", args as Record<string, unknown>);
    assert.deepStrictEqual([result.is_error, textOf(result)], [
      true,
      `Invalid arguments for tool "TodoWrite": ${problem}. Call the tool again with arguments matching its schema.`,
    ]);
  }
});
