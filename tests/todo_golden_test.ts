/**
 * TodoWrite in a running agent (issue 24 §4): the golden durable-event sequence of a turn whose model sends a valid
 * plan and then three lists the tool refuses (two items in progress, an item without content, a bad status) — each
 * refusal an `is_error` result written for the model — and the current plan as `GET /v1/agents/{id}` serves it
 * from the log, over a real `WsServer`. Regenerate the golden file after an intended change with
 * `UPDATE_GOLDEN=1 deno test -A tests/todo_golden_test.ts`.
 */
import assert from "node:assert/strict";
import {
  createAgentStack,
  eventShapes,
  scriptedAdapter,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { stdToolsPlugin } from "@terret/exec/tools";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { assertGolden } from "./fixtures/golden.ts";
import { ORCH_TOKEN, TOKEN, TOKENS } from "./ws/_harness.ts";

const item = (content: string, status: string, activeForm: string) => ({
  content,
  status,
  activeForm,
});

const PLAN = [
  item("Reproduce the bug", "completed", "Reproducing the bug"),
  item("Fix the parser", "in_progress", "Fixing the parser"),
  item("Run the tests", "pending", "Running the tests"),
];

Deno.test("golden: TodoWrite's validation errors are is_error results, and GET /v1/agents/{id} serves the last valid plan", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-todo-golden-" });
  try {
    const adapter = scriptedAdapter([
      toolCallsReply([{ id: "t1", name: "TodoWrite", args: { todos: PLAN } }]),
      toolCallsReply([{
        id: "t2",
        name: "TodoWrite",
        args: {
          todos: [
            item("Fix the parser", "in_progress", "Fixing the parser"),
            item("Run the tests", "in_progress", "Running the tests"),
          ],
        },
      }]),
      toolCallsReply([{
        id: "t3",
        name: "TodoWrite",
        args: { todos: [{ status: "pending", activeForm: "Running the tests" }] },
      }]),
      toolCallsReply([{
        id: "t4",
        name: "TodoWrite",
        args: { todos: [item("Run the tests", "blocked", "Running the tests")] },
      }]),
      textReply("The plan stands."),
      toolCallsReply([{
        id: "t5",
        name: "TodoWrite",
        args: {
          todos: [
            item("Reproduce the bug", "completed", "Reproducing the bug"),
            item("Fix the parser", "completed", "Fixing the parser"),
            item("Run the tests", "in_progress", "Running the tests"),
          ],
        },
      }]),
      textReply("Testing now."),
    ]);
    await using stack = await createAgentStack({
      adapter,
      allow: ["TodoWrite"],
      sqlitePath: `${dir}/sessions.db`,
      rows: [
        { id: "tools.std", plugin: stdToolsPlugin },
        { id: "interfaces.ws", plugin: WsInterface, config: { port: 0, tokens: TOKENS } },
      ],
    });
    const port = stack.ctx.get(WsServiceKey).port;
    const get = async (path: string, token = TOKEN): Promise<[number, unknown]> => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const text = await response.text();
      return [
        response.status,
        response.headers.get("content-type") === "application/json" ? JSON.parse(text) : text,
      ];
    };
    const agent = await stack.agents.ensure("orch-7.planner");
    const [, before] = await get("/v1/agents/orch-7.planner", ORCH_TOKEN);
    assert.equal((before as { plan: unknown }).plan, null);
    agent.send("Fix the parser bug, and keep a plan.");
    await agent.idle();
    await assertGolden(
      "todo/validation_errors",
      eventShapes(await stack.sessions.read("orch-7.planner")),
    );
    const [status, detail] = await get("/v1/agents/orch-7.planner", ORCH_TOKEN);
    assert.equal(status, 200);
    assert.deepStrictEqual((detail as { plan: unknown }).plan, PLAN);
    agent.send("Go on.");
    await agent.idle();
    const [, after] = await get("/v1/agents/orch-7.planner", ORCH_TOKEN);
    assert.deepStrictEqual((after as { plan: unknown }).plan, [
      item("Reproduce the bug", "completed", "Reproducing the bug"),
      item("Fix the parser", "completed", "Fixing the parser"),
      item("Run the tests", "in_progress", "Running the tests"),
    ]);
    // The plan is only for a token granted the agent; the listing carries no plan.
    assert.deepStrictEqual(await get("/v1/agents/orch-7.planner", "not-a-token-at-all-000"), [
      401,
      "unauthorized",
    ]);
    const [, listed] = await get("/v1/agents");
    assert.equal("plan" in (listed as { agents: Record<string, unknown>[] }).agents[0]!, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
