import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import { memoryStorePlugin } from "../sessions/memory_store.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import { sessionsPlugin } from "../sessions/sessions_plugin.ts";
import { createToolStack } from "../tools/testing.ts";
import { AMENDMENTS_HEADING, amendPersona, personaFromLog } from "./persona.ts";
import { PromptAssembler, PromptKey, type PromptSection } from "./prompt_assembler.ts";
import { CORE_ERRORS, type CoreErrorCode } from "../errors.ts";

const INPUT = { session_id: "s1", agent_id: "a1" };

function section(name: string, priority: number, text: string | undefined): PromptSection {
  return { name, priority, render: () => text };
}

Deno.test("assemble() orders sections by priority then name, normalizes each and skips empty ones", async () => {
  await using stack = await createToolStack();
  await stack.sessions.create({ session_id: "s1" });
  const { prompt, ctx } = stack;
  prompt.register(ctx, section("tools.notes", 300, "Tool notes\r\nline two   \n\n"));
  prompt.register(ctx, section("b", 200, "B at 200"));
  prompt.register(ctx, section("a", 200, "A at 200"));
  prompt.register(ctx, section("empty", 150, "  \n"));
  prompt.register(ctx, section("nothing", 120, undefined));
  prompt.register(ctx, {
    name: "env",
    priority: 100,
    render: (env) =>
      `agent ${env.agent_id} in ${env.session_id} with ${env.tools.join(",")} on ${env.model}; ` +
      `dirs ${env.workdirs.join(":")}; locale ${env.vars.locale}`,
  });
  assert.deepStrictEqual(prompt.sections(ctx), [
    { name: "persona", priority: 0 },
    { name: "persona.amendments", priority: 1 },
    { name: "env", priority: 100 },
    { name: "nothing", priority: 120 },
    { name: "empty", priority: 150 },
    { name: "a", priority: 200 },
    { name: "b", priority: 200 },
    { name: "tools.notes", priority: 300 },
  ]);
  const text = await prompt.assemble(ctx, {
    ...INPUT,
    model: "m/x",
    tools: ["Read", "Bash"],
    workdirs: ["/w"],
    vars: { locale: "fr" },
  });
  assert.equal(
    text,
    "agent a1 in s1 with Read,Bash on m/x; dirs /w; locale fr\n\nA at 200\n\nB at 200\n\n" +
      "Tool notes\nline two",
  );
});

Deno.test("register() refuses bad sections, reserved priorities and visible duplicates", async () => {
  await using stack = await createToolStack();
  const { prompt, ctx } = stack;
  const cases: [PromptSection, string, string][] = [
    [
      section("Bad Name", 100, ""),
      "TypeError",
      'Cannot register prompt section "Bad Name": its name',
    ],
    [
      section("low", 99, ""),
      "RangeError",
      'Cannot register prompt section "low": its priority must be an integer of at least 100 (lower ones are reserved), got 99',
    ],
    [
      section("frac", 100.5, ""),
      "RangeError",
      'Cannot register prompt section "frac": its priority must be an integer',
    ],
    [
      { name: "norender", priority: 100 } as PromptSection,
      "TypeError",
      'Cannot register prompt section "norender": render must be a function',
    ],
  ];
  for (const [bad, kind, message] of cases) {
    assert.throws(
      () => prompt.register(ctx, bad),
      (error: unknown) =>
        error instanceof Error && error.name === kind && error.message.startsWith(message),
    );
  }
  prompt.register(ctx, section("dup", 100, "x"));
  for (const name of ["dup", "persona"]) {
    assert.throws(
      () => prompt.register(ctx.fork("agent"), section(name, 100, "y")),
      (error: unknown) =>
        CORE_ERRORS.is(error, "SectionExists") &&
        error.message ===
          `Cannot register prompt section "${name}": a section with this name is already registered`,
    );
  }
});

Deno.test("a fork's sections render for that agent alone and die with the fork", async () => {
  await using stack = await createToolStack();
  await stack.sessions.create({ session_id: "s1" });
  const { prompt, ctx } = stack;
  prompt.register(ctx, section("shared", 100, "shared"));
  const a = ctx.fork("agent-a");
  const before = ctx.effectLabels();
  prompt.register(a, section("a.only", 110, "only a"));
  assert.deepStrictEqual(
    [await prompt.assemble(a, INPUT), await prompt.assemble(ctx, INPUT)],
    ["shared\n\nonly a", "shared"],
  );
  assert.deepStrictEqual(a.effectLabels(), ["on hames/collect", "prompt section a.only"]);
  await a.dispose();
  assert.deepStrictEqual(
    [a.effectCount, ctx.effectLabels(), await prompt.assemble(ctx, INPUT)],
    [0, before.filter((label) => label !== "scope agent-a"), "shared"],
  );
});

Deno.test("the persona is set at creation, amended over the session's life, and read from the log", async () => {
  await using stack = await createToolStack();
  const { prompt, ctx, sessions } = stack;
  prompt.register(ctx, section("rules", 100, "Rules."));
  await sessions.create({
    session_id: "s1",
    meta: { persona: "You are Ada, a careful engineer." },
  });
  await sessions.create({ session_id: "s2" });
  assert.equal(await prompt.assemble(ctx, INPUT), "You are Ada, a careful engineer.\n\nRules.");
  assert.equal(await prompt.assemble(ctx, { ...INPUT, session_id: "s2" }), "Rules.");

  await amendPersona(sessions, "s1", { text: "Answer in French." });
  await amendPersona(sessions, "s1", { text: "Be brief." });
  const amended = await prompt.assemble(ctx, INPUT);
  assert.equal(
    amended,
    `You are Ada, a careful engineer.\n\n${AMENDMENTS_HEADING}\n\nAnswer in French.\n\nBe brief.\n\nRules.`,
  );
  await amendPersona(sessions, "s1", { text: "You are Grace.", replace: true });
  assert.equal(await prompt.assemble(ctx, INPUT), "You are Grace.\n\nRules.");
  assert.deepStrictEqual(await prompt.persona("s1"), { text: "You are Grace.", amendments: [] });

  // Reconstructable from the log alone.
  assert.deepStrictEqual(personaFromLog(await sessions.read("s1")), {
    text: "You are Grace.",
    amendments: [],
  });
  assert.deepStrictEqual(
    (await sessions.read("s1")).map((event) => [event.type, event.payload]),
    [
      ["session/created", { meta: { persona: "You are Ada, a careful engineer." } }],
      ["persona/amended", { text: "Answer in French." }],
      ["persona/amended", { text: "Be brief." }],
      ["persona/amended", { text: "You are Grace.", replace: true }],
    ],
  );
  // The amendment projects nothing into the model history.
  assert.deepStrictEqual(await sessions.deriveMessages("s1"), []);
});

Deno.test("assemble() refuses an unknown session, a failing or non-string section, and an unstable one", async () => {
  await using stack = await createToolStack();
  await stack.sessions.create({ session_id: "s1" });
  const { prompt, ctx } = stack;
  await assert.rejects(
    prompt.assemble(ctx, { ...INPUT, session_id: "ghost" }),
    (error: unknown) =>
      CORE_ERRORS.is(error, "SessionNotFound") &&
      error.message === 'Cannot assemble the prompt for session "ghost": the log does not hold it',
  );
  const cases: [PromptSection, CoreErrorCode, string][] = [
    [
      {
        name: "thrower",
        priority: 100,
        render: () => {
          throw new Error("no env");
        },
      },
      "PromptSectionFailed",
      'Cannot assemble the prompt: section "thrower" failed: no env',
    ],
    [
      { name: "number", priority: 100, render: () => 42 as unknown as string },
      "PromptSectionFailed",
      'Cannot assemble the prompt: section "number" returned number, not a string',
    ],
    [
      { name: "clock", priority: 100, render: counter() },
      "PromptUnstable",
      'Cannot assemble the prompt: section "clock" rendered different text twice for the same env (it ' +
      "must be a pure function of the env)",
    ],
  ];
  for (const [bad, code, message] of cases) {
    const off = prompt.register(ctx, bad);
    await assert.rejects(
      prompt.assemble(ctx, INPUT),
      (error: unknown) => CORE_ERRORS.is(error, code) && error.message === message,
    );
    await off();
  }
});

function counter(): () => string {
  let n = 0;
  return () => `render ${++n}`;
}

Deno.test("the env is frozen and copied: a section cannot change it or the caller's values", async () => {
  await using stack = await createToolStack();
  await stack.sessions.create({ session_id: "s1" });
  const tools = ["Read"];
  const errors: string[] = [];
  stack.prompt.register(stack.ctx, {
    name: "vandal",
    priority: 100,
    render: (env) => {
      try {
        (env.tools as string[]).push("Bash");
      } catch (error) {
        errors.push((error as Error).name);
      }
      return env.tools.join(",");
    },
  });
  assert.equal(await stack.prompt.assemble(stack.ctx, { ...INPUT, tools }), "Read");
  assert.deepStrictEqual([tools, errors], [["Read"], ["TypeError", "TypeError"]]);
});

Deno.test("production renders each section once; other modes twice to catch instability", async () => {
  for (const mode of ["production", "test"] as const) {
    await using ctx = createContext({ mode });
    ctx.plugin(memoryStorePlugin, {});
    ctx.plugin(sessionsPlugin, {});
    ctx.plugin(PromptAssembler, {});
    await ctx.idle();
    await ctx.get(SessionsKey).create({ session_id: "s1" });
    let renders = 0;
    ctx.get(PromptKey).register(ctx, {
      name: "count",
      priority: 100,
      render: () => {
        renders++;
        return "x";
      },
    });
    await ctx.get(PromptKey).assemble(ctx, INPUT);
    assert.deepStrictEqual([mode, renders], [mode, mode === "production" ? 1 : 2]);
  }
});

Deno.test("persona/amended is a registered durable type only while the prompt row lives", async () => {
  await using ctx = createContext({ mode: "test" });
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  await sessions.create({ session_id: "s1" });
  await assert.rejects(
    amendPersona(sessions, "s1", { text: "x" }),
    (error: unknown) => CORE_ERRORS.is(error, "UnknownEventType"),
  );
  const fiber = ctx.plugin(PromptAssembler, {});
  await ctx.idle();
  assert.equal((await amendPersona(sessions, "s1", { text: "x" })).seq, 2);
  await fiber.dispose();
  await assert.rejects(
    amendPersona(sessions, "s1", { text: "y" }),
    (error: unknown) => CORE_ERRORS.is(error, "UnknownEventType"),
  );
  await assert.rejects(
    amendPersona(sessions, "s1", { text: 3 as unknown as string }),
    (error: unknown) =>
      error instanceof TypeError &&
      error.message === "Cannot amend the persona: the text must be a string",
  );
});

Deno.test("assemble() renders again only when its env or sections change: the same step's prompt is reused", async () => {
  await using ctx = createContext({ mode: "production" });
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  ctx.plugin(PromptAssembler, {});
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  const prompt = ctx.get(PromptKey);
  await sessions.create({ session_id: "s1", meta: { persona: "Be brief." } });
  await sessions.create({ session_id: "s2", meta: { persona: "Be brief." } });
  const renders: string[] = [];
  prompt.register(ctx, {
    name: "env",
    priority: 100,
    render: (env) => {
      const text = `${env.session_id}/${env.agent_id} ${env.model} ${env.tools.join(",")} ` +
        `${env.workdirs.join(":")} ${
          JSON.stringify(env.vars)
        } ${env.capabilities?.maxContextTokens}`;
      renders.push(text);
      return text;
    },
  });
  const caps = {
    tools: true,
    vision: false,
    thinking: false,
    caching: false,
    maxContextTokens: 1000,
  };
  const input = {
    ...INPUT,
    model: "m/x",
    capabilities: caps,
    tools: ["Read"],
    workdirs: ["/w"],
    vars: { locale: "fr" },
  };
  const first = await prompt.assemble(ctx, input);
  assert.equal(first, 'Be brief.\n\ns1/a1 m/x Read /w {"locale":"fr"} 1000');
  // Equal values in new objects: the same prompt, not rendered again.
  assert.equal(
    await prompt.assemble(ctx, {
      ...input,
      capabilities: { ...caps },
      tools: ["Read"],
      workdirs: ["/w"],
      vars: { locale: "fr" },
    }),
    first,
  );
  assert.equal(renders.length, 1);
  const changes = [
    { ...input, agent_id: "a2" },
    { ...input, model: "m/y" },
    { ...input, capabilities: { ...caps, maxContextTokens: 2000 } },
    { ...input, tools: ["Read", "Bash"] },
    { ...input, tools: [] },
    { ...input, workdirs: ["/v"] },
    { ...input, vars: { locale: "de" } },
    { ...input, vars: {} },
    { ...input, session_id: "s2" },
    input,
  ];
  for (const change of changes) await prompt.assemble(ctx, change);
  assert.deepStrictEqual(renders.slice(1), [
    's1/a2 m/x Read /w {"locale":"fr"} 1000',
    's1/a1 m/y Read /w {"locale":"fr"} 1000',
    's1/a1 m/x Read /w {"locale":"fr"} 2000',
    's1/a1 m/x Read,Bash /w {"locale":"fr"} 1000',
    's1/a1 m/x  /w {"locale":"fr"} 1000',
    's1/a1 m/x Read /v {"locale":"fr"} 1000',
    's1/a1 m/x Read /w {"locale":"de"} 1000',
    "s1/a1 m/x Read /w {} 1000",
    's2/a1 m/x Read /w {"locale":"fr"} 1000',
    's1/a1 m/x Read /w {"locale":"fr"} 1000',
  ]);
  // A persona amendment and a new section both show in the next prompt.
  await amendPersona(sessions, "s1", { text: "Cite files." });
  const amended = `Be brief.\n\n${AMENDMENTS_HEADING}\n\nCite files.\n\n` +
    's1/a1 m/x Read /w {"locale":"fr"} 1000';
  assert.equal(await prompt.assemble(ctx, input), amended);
  const off = prompt.register(ctx, section("late", 200, "Late section"));
  assert.equal(await prompt.assemble(ctx, input), `${amended}\n\nLate section`);
  await off();
  assert.equal(await prompt.assemble(ctx, input), amended);
  assert.equal(renders.length, 14);
});
