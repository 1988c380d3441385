import assert from "node:assert/strict";
import { z } from "zod";
import { createToolStack } from "./testing.ts";
import { defineTool, mcpToolName, parseMcpToolName, type ToolDefinition } from "./tool.ts";
import { CORE_ERRORS } from "../errors.ts";

function echo(name = "echo"): ToolDefinition<{ text: string; times: number }> {
  return defineTool({
    name,
    description: "Repeats its text",
    parameters: z.object({
      text: z.string().describe("What to repeat"),
      times: z.number().int().min(1).default(1),
    }),
    mutating: false,
    concurrency: "parallel",
    approval: "never",
    handler: ({ text, times }) => text.repeat(times),
  });
}

Deno.test("register() offers a zod tool's input JSON Schema and fills metadata defaults", async () => {
  await using stack = await createToolStack();
  stack.tools.register(stack.ctx, echo());
  stack.tools.register(stack.ctx, {
    name: "Write",
    description: "Writes a file",
    parameters: z.strictObject({ path: z.string() }),
    handler: () => "ok",
  });
  assert.deepStrictEqual(stack.tools.schemas(), [
    {
      name: "Write",
      description: "Writes a file",
      parameters: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
        additionalProperties: false,
      },
    },
    {
      name: "echo",
      description: "Repeats its text",
      parameters: {
        type: "object",
        properties: {
          text: { type: "string", description: "What to repeat" },
          times: { type: "integer", minimum: 1, maximum: 9007199254740991, default: 1 },
        },
        required: ["text"],
      },
    },
  ]);
  const write = stack.tools.get("Write")!;
  assert.deepStrictEqual(
    [write.mutating, write.concurrency, write.approval],
    [true, "serial", "policy"],
  );
  const info = stack.tools.get("echo")!;
  assert.deepStrictEqual(
    [info.mutating, info.concurrency, info.approval],
    [false, "parallel", "never"],
  );
  assert.equal(Object.isFrozen(info.schema.parameters), true);
  assert.equal(stack.tools.schemas()[1], info.schema);
  assert.equal(stack.tools.get("nope"), undefined);
});

Deno.test("register() takes a raw JSON Schema (an MCP tool's) as offered, without $schema", async () => {
  await using stack = await createToolStack();
  const inputSchema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
  };
  stack.tools.register(stack.ctx, {
    name: mcpToolName("nexus", "search"),
    description: "Searches the nexus",
    parameters: inputSchema,
    handler: () => "found",
  });
  assert.deepStrictEqual(stack.tools.schemas(), [{
    name: "mcp__nexus__search",
    description: "Searches the nexus",
    parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  }]);
  assert.equal(inputSchema.$schema, "https://json-schema.org/draft/2020-12/schema");
});

Deno.test("register() refuses bad definitions with a TypeError naming the fault", async () => {
  await using stack = await createToolStack();
  const base = { description: "d", parameters: z.object({}), handler: () => "" };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, name: "read file" }, 'Cannot register tool "read file": its name must match'],
    [{ ...base, name: "mcp*" }, 'Cannot register tool "mcp*": its name must match'],
    [{ ...base, name: "x".repeat(65) }, `Cannot register tool "${"x".repeat(65)}": its name`],
    [
      { ...base, name: "mcp__a__" },
      'Cannot register tool "mcp__a__": a name starting with mcp__ must read mcp__<server>__<tool>',
    ],
    [{ ...base, name: "t", description: " " }, 'Cannot register tool "t": its description must'],
    [
      { ...base, name: "t", handler: "x" },
      'Cannot register tool "t": its handler must be a function',
    ],
    [
      { ...base, name: "t", concurrency: "safe" },
      'Cannot register tool "t": concurrency must be "parallel" or "serial", got "safe"',
    ],
    [
      { ...base, name: "t", approval: "maybe" },
      'Cannot register tool "t": approval must be "never", "policy" or "always", got "maybe"',
    ],
    [
      { ...base, name: "t", parameters: z.string() },
      'Cannot register tool "t": its parameters must describe an object',
    ],
    [
      { ...base, name: "t", parameters: { type: "array" } },
      'Cannot register tool "t": its JSON Schema parameters must have type "object"',
    ],
    [
      { ...base, name: "t", parameters: z.object({ when: z.date() }) },
      'Cannot register tool "t": its zod parameters cannot be expressed as JSON Schema:',
    ],
  ];
  for (const [def, message] of cases) {
    assert.throws(
      () => stack.tools.register(stack.ctx, def as unknown as ToolDefinition),
      (error: unknown) => error instanceof TypeError && error.message.startsWith(message),
      message,
    );
  }
  assert.deepStrictEqual(stack.tools.schemas(), []);
});

Deno.test("register() refuses a name already visible from the owner, and accepts it again once disposed", async () => {
  await using stack = await createToolStack();
  const plugin = stack.ctx.scope("tools.std");
  const off = stack.tools.register(plugin, echo());
  const agent = stack.ctx.fork("agent");
  for (const owner of [stack.ctx, plugin, agent]) {
    assert.throws(
      () => stack.tools.register(owner, echo()),
      (error: unknown) =>
        CORE_ERRORS.is(error, "ToolExists") &&
        error.message ===
          'Cannot register tool "echo": a tool with this name is already registered (by "tools.std")',
    );
  }
  await off();
  assert.equal(off.active, false);
  stack.tools.register(agent, echo());
  assert.deepStrictEqual(stack.tools.list({ ctx: agent }).map((tool) => tool.name), ["echo"]);
  assert.deepStrictEqual(stack.tools.list().map((tool) => tool.name), []);
});

Deno.test("a fork's tools are visible from the fork alone and die with it", async () => {
  await using stack = await createToolStack();
  stack.tools.register(stack.ctx, echo("shared"));
  const a = stack.ctx.fork("agent-a");
  const b = stack.ctx.fork("agent-b");
  const rootEffects = stack.ctx.effectLabels();
  const effectsBefore = a.effectCount;
  stack.tools.register(a, echo("mine"));
  stack.tools.register(a, echo("Notes"));
  stack.tools.register(b, echo("Notes"));
  const names = (ctx = stack.ctx) => stack.tools.list({ ctx }).map((tool) => tool.name);
  assert.deepStrictEqual(names(a), ["Notes", "mine", "shared"]);
  assert.deepStrictEqual(names(b), ["Notes", "shared"]);
  assert.deepStrictEqual(names(), ["shared"]);
  assert.equal(a.effectCount, effectsBefore + 4);

  await a.dispose();
  assert.equal(a.effectCount, 0);
  assert.deepStrictEqual(names(b), ["Notes", "shared"]);
  assert.deepStrictEqual(names(), ["shared"]);
  assert.deepStrictEqual(
    stack.ctx.effectLabels(),
    rootEffects.filter((label) => label !== "scope agent-a"),
  );
  assert.throws(
    () => stack.tools.register(a, echo("late")),
    (error: unknown) => CORE_ERRORS.is(error, "ContextDisposed"),
  );
});

Deno.test("a nested fork sees its ancestors' tools; an ancestor's later same-named tool yields to the nearer one", async () => {
  await using stack = await createToolStack();
  const agent = stack.ctx.fork("agent");
  const child = agent.fork("child");
  stack.tools.register(child, { ...echo("probe"), description: "the child's" });
  stack.tools.register(stack.ctx, { ...echo("probe"), description: "the root's" });
  assert.equal(stack.tools.get("probe", { ctx: child })?.description, "the child's");
  assert.equal(stack.tools.get("probe", { ctx: agent })?.description, "the root's");
  assert.equal(stack.tools.get("probe")?.description, "the root's");
});

Deno.test("schemas() order is by code unit, independent of registration order", async () => {
  const names = ["b", "B", "a_b", "a-b", "Z", "mcp__x__y", "A"];
  const orders: string[][] = [];
  for (const order of [names, [...names].reverse()]) {
    await using stack = await createToolStack();
    for (const name of order) stack.tools.register(stack.ctx, echo(name));
    orders.push(stack.tools.schemas().map((schema) => schema.name));
  }
  assert.deepStrictEqual(orders[0], ["A", "B", "Z", "a-b", "a_b", "b", "mcp__x__y"]);
  assert.deepStrictEqual(orders[1], orders[0]);
});

Deno.test("mcpToolName() and parseMcpToolName() round-trip and refuse ambiguous names", () => {
  assert.equal(mcpToolName("nexus", "search"), "mcp__nexus__search");
  assert.equal(mcpToolName("my-server_2", "get__it"), "mcp__my-server_2__get__it");
  assert.deepStrictEqual(parseMcpToolName("mcp__my-server_2__get__it"), {
    server: "my-server_2",
    tool: "get__it",
  });
  assert.equal(parseMcpToolName("Read"), undefined);
  assert.equal(parseMcpToolName("mcp__a____b"), undefined);
  for (const [server, tool] of [["a__b", "c"], ["a", "b.c"], ["", "x"], ["s", "x".repeat(60)]]) {
    assert.throws(
      () => mcpToolName(server!, tool!),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.startsWith(`Cannot name MCP tool "${tool}" of server "${server}"`),
    );
  }
});
