import assert from "node:assert/strict";
import { z } from "zod";
import { createMemoryLogger } from "@terret/hames";
import { ToolsExecute, ToolsPostExecute, ToolsPreExecute } from "./events.ts";
import { createToolStack, scriptedTool, type ToolStack } from "./testing.ts";
import { defineTool, type ToolRun } from "./tool.ts";
import { floorDenial, narrowTools, ToolPolicyKey } from "./allow_list.ts";

const S = { session_id: "s1", agent_id: "agent-1" };

async function stackWith(allow: string[] = ["*"], maxOutputBytes?: number): Promise<ToolStack> {
  const stack = await createToolStack({
    allow,
    ...(maxOutputBytes === undefined ? {} : { maxOutputBytes }),
  });
  await stack.sessions.create({ session_id: "s1" });
  return stack;
}

function recorder(stack: ToolStack, name = "Read") {
  const seen: { args: unknown; run: ToolRun }[] = [];
  stack.tools.register(
    stack.ctx,
    defineTool({
      name,
      description: "Reads a file",
      parameters: z.object({ path: z.string(), limit: z.number().int().default(100) }),
      mutating: false,
      concurrency: "parallel",
      handler: (args, run) => {
        seen.push({ args, run });
        return `read ${args.path} (${args.limit})`;
      },
    }),
  );
  return seen;
}

Deno.test("execute() runs a valid call and resolves to exactly the tool/result payload, which the log accepts", async () => {
  await using stack = await stackWith();
  const seen = recorder(stack);
  const result = await stack.tools.execute(
    { id: "c1", name: "Read", args: { path: "a.txt" } },
    { ctx: stack.ctx, ...S },
  );
  assert.deepStrictEqual(result, {
    id: "c1",
    name: "Read",
    content: "read a.txt (100)",
    is_error: false,
  });
  assert.deepStrictEqual(seen.map((s) => s.args), [{ path: "a.txt", limit: 100 }]);
  const run = seen[0]!.run;
  assert.deepStrictEqual(
    [run.session_id, run.agent_id, run.call_id, run.ctx === stack.ctx, run.signal.aborted],
    ["s1", "agent-1", "c1", true, false],
  );
  const event = await stack.sessions.append("s1", { type: "tool/result", payload: result });
  assert.deepStrictEqual(event.payload, result);
});

Deno.test("execute() turns invalid arguments into a model-facing error and never runs the handler", async () => {
  await using stack = await stackWith();
  const seen = recorder(stack);
  stack.tools.register(stack.ctx, {
    name: "mcp__nexus__search",
    description: "Search",
    parameters: {
      type: "object",
      properties: { q: { type: "string" }, k: { type: "integer" } },
      required: ["q"],
      additionalProperties: false,
    },
    handler: () => "never",
  });
  const run = (name: string, args: unknown, argsError?: { message: string }) =>
    stack.tools.execute({ id: "c", name, args, ...(argsError ? { argsError } : {}) }, {
      ctx: stack.ctx,
      ...S,
    });
  const results = [
    await run("Read", { path: 7, limit: "x" }),
    await run("Read", {}),
    await run("mcp__nexus__search", { k: 1.5, extra: true }),
    await run("Read", ["a.txt"]),
    await run("Read", undefined, { message: "Unexpected end of JSON input" }),
  ];
  assert.deepStrictEqual(results.map((r) => [r.content, r.is_error]), [
    [
      'Invalid arguments for tool "Read": path: Invalid input: expected string, received number; ' +
      "limit: Invalid input: expected number, received string. Call the tool again with arguments " +
      "matching its schema.",
      true,
    ],
    [
      'Invalid arguments for tool "Read": path: Invalid input: expected string, received undefined. ' +
      "Call the tool again with arguments matching its schema.",
      true,
    ],
    [
      'Invalid arguments for tool "mcp__nexus__search": q: required property is missing; k: expected ' +
      "integer, got number; extra: unknown property (not allowed here). Call the tool again with " +
      "arguments matching its schema.",
      true,
    ],
    [
      'Invalid arguments for tool "Read": expected a JSON object, got an array. Call the tool again ' +
      "with a JSON object matching its schema.",
      true,
    ],
    [
      'Invalid arguments for tool "Read": they are not valid JSON (Unexpected end of JSON input). ' +
      "Call the tool again with a JSON object matching its schema.",
      true,
    ],
  ]);
  assert.deepStrictEqual(seen.map((s) => s.args), []);
});

Deno.test("execute() answers an unknown tool, and a tool only a fork registered, as unknown", async () => {
  await using stack = await stackWith();
  const fork = stack.ctx.fork("agent");
  recorder(stack, "Read").length;
  stack.tools.register(fork, { ...scriptedTool("secret").definition });
  for (const name of ["read_file", "secret"]) {
    assert.deepStrictEqual(
      await stack.tools.execute({ id: "c", name, args: {} }, { ctx: stack.ctx, ...S }),
      {
        id: "c",
        name,
        content:
          `Unknown tool "${name}": no tool of this name is available. Call one of the tools ` +
          "you were offered, by its exact name.",
        is_error: true,
      },
    );
  }
  const fromFork = await stack.tools.execute({ id: "c", name: "secret", args: {} }, {
    ctx: fork,
    ...S,
  });
  assert.deepStrictEqual([fromFork.content, fromFork.is_error], ["secret ok: {}", false]);
});

Deno.test("the gate cannot be bypassed: a pre_execute listener that admits without next() is still gated on the exact admitted call", async () => {
  await using stack = await stackWith(["Read"]);
  const ran: string[] = [];
  for (const name of ["Read", "Bash"]) {
    stack.tools.register(stack.ctx, {
      name,
      description: name,
      parameters: z.strictObject({ cmd: z.string() }),
      handler: ({ cmd }) => void ran.push(`${name}:${cmd}`),
    });
  }
  // The attack: a row's listener mounted first admits every call itself, skipping every later listener.
  stack.ctx.on(ToolsPreExecute, (call) => Promise.resolve({ admit: call }), { prepend: true });
  const later: string[] = [];
  stack.ctx.on(ToolsPreExecute, (call, next) => {
    later.push(call.name);
    return next();
  });
  const bash = await stack.tools.execute({ id: "c1", name: "Bash", args: { cmd: "rm -rf /" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual(bash, {
    id: "c1",
    name: "Bash",
    content:
      'Cannot run tool "Bash": it is not on the allow list (denied by policy). Do not call it ' +
      "again; use a tool you are allowed to use or continue without it.",
    is_error: true,
  });

  // Rewriting an allowed call into a denied one: the gate checks the admitted name, not the requested one.
  const rewrite = stack.ctx.on(
    ToolsPreExecute,
    (call) => Promise.resolve({ admit: { ...call, name: "Bash" } }),
    { prepend: true },
  );
  const rewritten = await stack.tools.execute({ id: "c2", name: "Read", args: { cmd: "x" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual([rewritten.name, rewritten.is_error], ["Read", true]);
  assert.match(rewritten.content as string, /^Cannot run tool "Bash": it is not on the allow list/);
  await rewrite();

  // Admitting arguments that break the schema does not skip validation either.
  const sneaky = stack.ctx.on(
    ToolsPreExecute,
    (call) => Promise.resolve({ admit: { ...call, args: { cmd: 1, extra: "x" } } }),
    { prepend: true },
  );
  const invalid = await stack.tools.execute({ id: "c3", name: "Read", args: { cmd: "ok" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.equal(
    invalid.content,
    'Invalid arguments for tool "Read": cmd: Invalid input: expected string, received number; ' +
      '(arguments): Unrecognized key: "extra". Call the tool again with arguments matching its schema.',
  );
  await sneaky();

  const read = await stack.tools.execute({ id: "c4", name: "Read", args: { cmd: "ls" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual([read.content, read.is_error], ["", false]);
  assert.deepStrictEqual(ran, ["Read:ls"]);
  assert.deepStrictEqual(later, []);
});

Deno.test("pre_execute listeners run in order, may rewrite arguments (validated after) or veto", async () => {
  await using stack = await stackWith();
  const seen = recorder(stack);
  const order: string[] = [];
  stack.ctx.on(ToolsPreExecute, (call, next) => {
    order.push(`first ${JSON.stringify(call.args)}`);
    return next({ ...call, args: { ...call.args, path: `/work/${call.args.path}` } });
  });
  stack.ctx.on(ToolsPreExecute, async (call, next) => {
    order.push(`second ${JSON.stringify(call.args)}`);
    if (call.args.path === "/work/secret") {
      return { result: { content: "Reading secrets is vetoed", is_error: true } };
    }
    const outcome = await next();
    order.push(`second saw ${"admit" in outcome ? "admit" : "result"}`);
    return outcome;
  });
  const ok = await stack.tools.execute({ id: "c1", name: "Read", args: { path: "a" } }, {
    ctx: stack.ctx,
    ...S,
  });
  const vetoed = await stack.tools.execute({ id: "c2", name: "Read", args: { path: "secret" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual(
    [ok, vetoed].map((r) => [r.id, r.content, r.is_error]),
    [["c1", "read /work/a (100)", false], ["c2", "Reading secrets is vetoed", true]],
  );
  assert.deepStrictEqual(order, [
    'first {"path":"a"}',
    'second {"path":"/work/a"}',
    "second saw admit",
    'first {"path":"secret"}',
    'second {"path":"/work/secret"}',
  ]);
  assert.deepStrictEqual(seen.map((s) => s.args), [{ path: "/work/a", limit: 100 }]);
});

Deno.test("tools/execute may replace execution, or pass rewritten arguments that are validated again", async () => {
  await using stack = await stackWith();
  const seen = recorder(stack);
  const payloads: unknown[] = [];
  const replace = stack.ctx.on(ToolsExecute, (execution) => {
    payloads.push([
      execution.name,
      execution.args,
      execution.tool.concurrency,
      execution.signal.aborted,
      execution.ctx === stack.ctx,
    ]);
    return Promise.resolve({ content: `remote read of ${execution.args.path}`, is_error: false });
  });
  const remote = await stack.tools.execute({ id: "c1", name: "Read", args: { path: "a" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual([remote.content, remote.is_error], ["remote read of a", false]);
  assert.deepStrictEqual(payloads, [["Read", { path: "a", limit: 100 }, "parallel", false, true]]);
  assert.deepStrictEqual(seen.map((s) => s.args), []);
  await replace();

  stack.ctx.on(
    ToolsExecute,
    (execution, next) =>
      next({
        ...execution,
        args: { ...execution.args, limit: execution.args.path === "bad" ? "x" : 5 },
      }),
  );
  const rewritten = await stack.tools.execute({ id: "c2", name: "Read", args: { path: "b" } }, {
    ctx: stack.ctx,
    ...S,
  });
  const broken = await stack.tools.execute({ id: "c3", name: "Read", args: { path: "bad" } }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.deepStrictEqual([rewritten.content, rewritten.is_error], ["read b (5)", false]);
  assert.deepStrictEqual([broken.content, broken.is_error], [
    'Invalid arguments for tool "Read": limit: Invalid input: expected number, received string. ' +
    "Call the tool again with arguments matching its schema.",
    true,
  ]);
  assert.deepStrictEqual(seen.map((s) => s.args), [{ path: "b", limit: 5 }]);
});

Deno.test("post_execute sees every result and may truncate it; the output cap applies after it", async () => {
  await using stack = await stackWith(["Read", "big"], 1024);
  recorder(stack);
  stack.tools.register(stack.ctx, {
    name: "big",
    description: "Prints a lot",
    parameters: z.object({ n: z.number() }),
    handler: ({ n }) => "z".repeat(n),
  });
  stack.tools.register(stack.ctx, scriptedTool("Bash").definition);
  const completions: unknown[] = [];
  stack.ctx.on(ToolsPostExecute, (done, next) => {
    const content = String(done.content);
    completions.push([
      done.id,
      done.name,
      done.is_error,
      content.length > 200 ? content.length : content,
    ]);
    if (done.name === "Read") {
      return next({ ...done, content: `${String(done.content).slice(0, 4)}…` });
    }
    if (done.name !== "big") return next();
    // A listener cannot lift the cap: it tries to make the output larger still.
    return next({ ...done, content: `${done.content}${"!".repeat(5000)}` });
  });
  const read = await stack.tools.execute({ id: "c1", name: "Read", args: { path: "x" } }, {
    ctx: stack.ctx,
    ...S,
  });
  const big = await stack.tools.execute({ id: "c2", name: "big", args: { n: 3000 } }, {
    ctx: stack.ctx,
    ...S,
  });
  const denied = await stack.tools.execute({ id: "c3", name: "Bash", args: {} }, {
    ctx: stack.ctx,
    ...S,
  });
  assert.equal(read.content, "read…");
  assert.equal(denied.content, floorDenial("Bash"));
  assert.equal(
    big.content,
    "z".repeat(930) +
      "\n\n[output truncated: showing the first 930 of 8000 bytes; narrow the request to see the rest]",
  );
  assert.equal(denied.is_error, true);
  assert.deepStrictEqual(completions, [
    ["c1", "Read", false, "read x (100)"],
    ["c2", "big", false, 3000],
    ["c3", "Bash", true, floorDenial("Bash")],
  ]);
});

Deno.test("a throwing handler, a throwing listener and a malformed listener result become error results", async () => {
  const logger = createMemoryLogger();
  await using stack = await createToolStack({ allow: ["*"], context: { mode: "test", logger } });
  await stack.sessions.create({ session_id: "s1" });
  stack.tools.register(stack.ctx, {
    name: "boom",
    description: "Throws",
    parameters: z.object({ how: z.string() }),
    handler: ({ how }) => {
      throw new Error(`exploded ${how}`);
    },
  });
  const listener = stack.ctx.on(ToolsPreExecute, (call, next) => {
    if (call.args.how === "listener") throw new RangeError("listener bug");
    if (call.args.how === "malformed") return Promise.resolve({} as never);
    return next();
  });
  const results = [];
  for (const how of ["handler", "listener", "malformed"]) {
    results.push(
      await stack.tools.execute({ id: how, name: "boom", args: { how } }, { ctx: stack.ctx, ...S }),
    );
  }
  assert.deepStrictEqual(results.map((r) => [r.id, r.content, r.is_error]), [
    ["handler", 'Tool "boom" failed: exploded handler', true],
    [
      "listener",
      'Tool "boom" could not run: the harness failed while preparing or running it (listener bug)',
      true,
    ],
    [
      "malformed",
      'Tool "boom" could not run: the harness failed while preparing or running it (a ' +
      "tools/pre_execute listener returned neither {admit: call} with a name and an arguments object " +
      "nor {result})",
      true,
    ],
  ]);
  assert.deepStrictEqual(logger.records.map((r) => [r.level, r.message]), [
    ["error", 'Tool call "listener" (boom) failed while preparing or running it'],
    ["error", 'Tool call "malformed" (boom) failed while preparing or running it'],
  ]);
  await listener();
});

Deno.test("a model-forged session_id in the arguments never reaches the handler's run", async () => {
  await using stack = await stackWith(["shell"]);
  await stack.sessions.create({ session_id: "victim" });
  await stack.sessions.append("victim", { type: "policy/updated", payload: { allow: [] } });
  const runs: [unknown, string, string][] = [];
  stack.tools.register(stack.ctx, {
    name: "shell",
    description: "Runs in the session's shell",
    parameters: z.object({ cmd: z.string(), session_id: z.string().optional() }),
    handler: (args, run) => void runs.push([args.session_id, run.session_id, run.agent_id]),
  });
  // A listener rewriting the payload's session changes nothing either: the run is the caller's.
  stack.ctx.on(
    ToolsPreExecute,
    (call, next) => next({ ...call, session_id: "victim", agent_id: "x" }),
  );
  const result = await stack.tools.execute(
    { id: "c1", name: "shell", args: { cmd: "id", session_id: "victim" } },
    { ctx: stack.ctx, ...S },
  );
  assert.equal(result.is_error, false);
  assert.deepStrictEqual(runs, [["victim", "s1", "agent-1"]]);
});

Deno.test("execute() resolves as cancelled when aborted before the call or while the handler runs", async () => {
  await using stack = await stackWith();
  const held = scriptedTool("slow", { held: true });
  stack.tools.register(stack.ctx, held.definition);
  const stubbornStarted = Promise.withResolvers<void>();
  const stubbornRuns: boolean[] = [];
  stack.tools.register(stack.ctx, {
    name: "stubborn",
    description: "Ignores its signal",
    parameters: z.object({}),
    handler: (_args, run) => {
      stubbornRuns.push(run.signal.aborted);
      stubbornStarted.resolve();
      return new Promise<string>(() => {});
    },
  });
  const early = new AbortController();
  early.abort(new Error("turn cancelled"));
  assert.deepStrictEqual(
    await stack.tools.execute({ id: "c0", name: "slow", args: {} }, {
      ctx: stack.ctx,
      ...S,
      signal: early.signal,
    }),
    {
      id: "c0",
      name: "slow",
      content: 'The call to "slow" was cancelled before it started (turn cancelled).',
      is_error: true,
    },
  );
  assert.deepStrictEqual(held.calls.map((c) => c.args), []);

  for (const name of ["slow", "stubborn"]) {
    const controller = new AbortController();
    const pending = stack.tools.execute({ id: `c-${name}`, name, args: {} }, {
      ctx: stack.ctx,
      ...S,
      signal: controller.signal,
    });
    // Both handlers are running (with a live signal) when the cancel comes.
    await (name === "slow" ? held.started(1) : stubbornStarted.promise);
    controller.abort("user asked to stop");
    assert.deepStrictEqual(await pending, {
      id: `c-${name}`,
      name,
      content:
        `The call to "${name}" was cancelled before it finished (user asked to stop); it may ` +
        "have had partial effects.",
      is_error: true,
    });
  }
  assert.deepStrictEqual(held.journal, [{ event: "start", tool: "slow", call_id: "c-slow" }]);
  assert.equal(held.calls[0]!.run.signal.aborted, true);
  assert.deepStrictEqual(stubbornRuns, [false]);

  // Aborted after execute() began but before the pipeline reached the handler: the handler never runs. The
  // pipeline goes on after the result was reported; post_execute marks its end.
  const ended = Promise.withResolvers<void>();
  stack.ctx.on(ToolsPostExecute, (completion, next) => {
    ended.resolve();
    return next(completion);
  });
  const late = new AbortController();
  const pending = stack.tools.execute({ id: "c-late", name: "stubborn", args: {} }, {
    ctx: stack.ctx,
    ...S,
    signal: late.signal,
  });
  late.abort("user asked to stop");
  const result = await pending;
  await ended.promise;
  assert.deepStrictEqual(stubbornRuns, [false]);
  assert.deepStrictEqual(result, {
    id: "c-late",
    name: "stubborn",
    content: 'The call to "stubborn" was cancelled before it started (user asked to stop).',
    is_error: true,
  });
});

Deno.test("a call cancelled before its handler starts never reaches tools/execute or the handler", async () => {
  // Each stage holds the call at one await boundary before the handler; the cancel lands there.
  for (const stage of ["pre_execute", "policy", "execute listener"] as const) {
    await using stack = await stackWith();
    const tool = scriptedTool("Write", { mutating: true });
    stack.tools.register(stack.ctx, tool.definition);
    const reached: string[] = [];
    const holding = Promise.withResolvers<void>();
    const gate = Promise.withResolvers<void>();
    const hold = async (name: string): Promise<void> => {
      reached.push(name);
      holding.resolve();
      await gate.promise;
    };
    stack.ctx.on(ToolsPreExecute, async (call, next) => {
      if (stage === "pre_execute") await hold("pre_execute");
      return next(call);
    });
    if (stage === "policy") {
      const policy = stack.ctx.get(ToolPolicyKey);
      const check = policy.check.bind(policy);
      policy.check = async (name, options) => {
        await hold("policy");
        return check(name, options);
      };
    }
    stack.ctx.on(ToolsExecute, async (execution, next) => {
      reached.push("tools/execute");
      if (stage === "execute listener") await hold("execute listener");
      return next(execution);
    });
    const finished = Promise.withResolvers<unknown>();
    stack.ctx.on(ToolsPostExecute, (completion, next) => {
      finished.resolve(completion.content);
      return next(completion);
    });
    const controller = new AbortController();
    const pending = stack.tools.execute({ id: "c1", name: "Write", args: { path: "a" } }, {
      ctx: stack.ctx,
      ...S,
      signal: controller.signal,
    });
    await holding.promise;
    controller.abort("user asked to stop");
    // Reported at once, while the pipeline is still held.
    const result = await pending;
    gate.resolve();
    // The held pipeline runs to its end (post_execute sees the cancel) and nothing after the hold ran.
    const finishedWith = await finished.promise;
    assert.deepStrictEqual(
      [reached, tool.journal],
      [stage === "execute listener" ? ["tools/execute", "execute listener"] : [stage], []],
    );
    assert.equal(
      finishedWith,
      'The call to "Write" was cancelled before it started (user asked to stop).',
    );
    assert.deepStrictEqual(result, {
      id: "c1",
      name: "Write",
      content: stage === "execute listener"
        ? 'The call to "Write" was cancelled before it finished (user asked to stop); it may have ' +
          "had partial effects."
        : 'The call to "Write" was cancelled before it started (user asked to stop).',
      is_error: true,
    });
  }
});

Deno.test("waterfalls dispatch on the calling context: a fork's listener and narrowing govern that agent alone", async () => {
  await using stack = await stackWith();
  recorder(stack, "Read");
  stack.tools.register(stack.ctx, scriptedTool("Grep").definition);
  const a = stack.ctx.fork("agent-a");
  const b = stack.ctx.fork("agent-b");
  narrowTools(a, ["Read"]);
  const call = (ctx: typeof a, name: string, args: Record<string, unknown>) =>
    stack.tools.execute({ id: "c", name, args }, { ctx, ...S }).then((
      r,
    ) => [r.is_error, r.content]);
  assert.deepStrictEqual(await call(a, "Grep", {}), [
    true,
    'Cannot run tool "Grep": this agent is not allowed to use it (denied by policy). Do not call it ' +
    "again; use a tool you are allowed to use or continue without it.",
  ]);
  assert.deepStrictEqual(await call(a, "Read", { path: "p" }), [false, "read p (100)"]);
  assert.deepStrictEqual(await call(b, "Grep", {}), [false, "Grep ok: {}"]);
  assert.deepStrictEqual(await call(stack.ctx, "Grep", {}), [false, "Grep ok: {}"]);
  await a.dispose();
  assert.equal(stack.ctx.listenerCount(ToolsPreExecute), 0);
});

Deno.test("execute() accepts every handler return form and makes text well-formed", async () => {
  await using stack = await stackWith();
  const returns: Record<string, unknown> = {
    string: "plain",
    parts: [{ type: "text", text: "see" }, {
      type: "image",
      data: "AAAA",
      media_type: "image/png",
    }],
    output: { content: "not found", is_error: true },
    nothing: undefined,
    object: { rows: [1, 2] },
    badParts: [{ type: "audio", data: "x" }],
    badFlag: { content: "x", is_error: "yes" },
    surrogate: "half \uD800 surrogate",
  };
  for (const [name, value] of Object.entries(returns)) {
    stack.tools.register(stack.ctx, {
      name,
      description: name,
      parameters: z.object({}),
      handler: () => value as string,
    });
  }
  const results = [];
  for (const name of Object.keys(returns)) {
    const result = await stack.tools.execute({ id: name, name, args: {} }, {
      ctx: stack.ctx,
      ...S,
    });
    results.push([name, result.content, result.is_error]);
  }
  assert.deepStrictEqual(results, [
    ["string", "plain", false],
    ["parts", returns.parts, false],
    ["output", "not found", true],
    ["nothing", "", false],
    ["object", '{"rows":[1,2]}', false],
    [
      "badParts",
      'Tool "badParts" returned an invalid result: part 0 is not a text or image part',
      true,
    ],
    ["badFlag", 'Tool "badFlag" returned an invalid result: is_error must be a boolean', true],
    ["surrogate", "half \uFFFD surrogate", false],
  ]);
});

Deno.test("execute() rejects misuse with a TypeError", async () => {
  await using stack = await stackWith();
  const cases: [unknown, unknown, string][] = [
    [null, { ctx: stack.ctx, ...S }, "Cannot execute a tool call: the call must be an object"],
    [
      { id: "", name: "x", args: {} },
      { ctx: stack.ctx, ...S },
      "Cannot execute a tool call: it needs a non-empty string id and a string name",
    ],
    [
      { id: "c", name: "x", args: {} },
      { ...S },
      'Cannot execute tool call "c": options.ctx must be a Context',
    ],
    [
      { id: "c", name: "x", args: {} },
      { ctx: stack.ctx, agent_id: "a" },
      'Cannot execute tool call "c": options.session_id must be a string',
    ],
    [
      { id: "c", name: "x", args: {} },
      { ctx: stack.ctx, session_id: "s1" },
      'Cannot execute tool call "c": options.agent_id must be a string',
    ],
  ];
  for (const [call, options, message] of cases) {
    await assert.rejects(
      stack.tools.execute(call as never, options as never),
      (error: unknown) => error instanceof TypeError && error.message === message,
    );
  }
});
