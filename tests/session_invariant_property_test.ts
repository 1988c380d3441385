/**
 * The generative log-invariant property (plan §11, left open by the seed's M2): random plugin sets that inject
 * context and rewrite claims drive a faithful simulation of the loop's claim → append → derive → outbound path,
 * and the outbound digest always matches derive_messages replayed from the store. The negative property: a
 * rewrite applied after the append (so never logged) is always caught.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { type Context, createContext, defineEvent, TerretError } from "@terret/hames";
import { type Message, SessionLog, type SessionStore } from "@terret/core";
import { digestMessages, MemorySessionStore, SqliteSessionStore } from "@terret/core/sessions";

/** The claim waterfall the simulated loop runs before appending the claimed message (as agent/pre_step will). */
const SimClaim = defineEvent("sim/claim", {
  mode: "waterfall",
  description: "Test-only: rewrites a claimed user message before it is appended",
  payload: z.object({ content: z.string() }),
  result: z.object({ content: z.string() }),
});

type Rewrite =
  | { readonly op: "prefix" | "suffix"; readonly text: string }
  | { readonly op: "upper" }
  | { readonly op: "replace"; readonly from: string; readonly to: string };

type PluginSpec =
  | { readonly kind: "rewrite"; readonly rewrite: Rewrite }
  | { readonly kind: "inject"; readonly text: string; readonly every: number }
  | { readonly kind: "scrub"; readonly secret: string };

interface StepSpec {
  readonly input: string;
  readonly calls: number;
  readonly chunks: number;
  readonly compact: boolean;
}

const text = fc.string({ unit: "grapheme", maxLength: 12 });
const rewrite: fc.Arbitrary<Rewrite> = fc.oneof(
  fc.record({ op: fc.constantFrom("prefix" as const, "suffix" as const), text }),
  fc.constant({ op: "upper" as const }),
  fc.record({
    op: fc.constant("replace" as const),
    from: fc.string({ minLength: 1, maxLength: 2 }),
    to: text,
  }),
);
const plugin: fc.Arbitrary<PluginSpec> = fc.oneof(
  fc.record({ kind: fc.constant("rewrite" as const), rewrite }),
  fc.record({ kind: fc.constant("inject" as const), text, every: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant("scrub" as const),
    secret: fc.constantFrom("sk-1", "ab", "é", "🚀"),
  }),
);
const step: fc.Arbitrary<StepSpec> = fc.record({
  input: fc.string({ unit: "grapheme", maxLength: 40 }),
  calls: fc.integer({ min: 0, max: 2 }),
  chunks: fc.integer({ min: 0, max: 3 }),
  compact: fc.boolean(),
});

function apply(rule: Rewrite, content: string): string {
  switch (rule.op) {
    case "prefix":
      return rule.text + content;
    case "suffix":
      return content + rule.text;
    case "upper":
      return content.toUpperCase();
    case "replace":
      return content.replaceAll(rule.from, rule.to);
  }
}

function mount(ctx: Context, log: SessionLog, plugins: readonly PluginSpec[]): PluginSpec[] {
  const injectors: PluginSpec[] = [];
  for (const spec of plugins) {
    if (spec.kind === "rewrite") {
      ctx.on(SimClaim, (claim, next) => next({ content: apply(spec.rewrite, claim.content) }));
    } else if (spec.kind === "scrub") {
      log.registerScrubber(ctx, (value) => value.replaceAll(spec.secret, "[REDACTED]"));
    } else {
      injectors.push(spec);
    }
  }
  return injectors;
}

/**
 * One simulated turn per step. `faithful` sends exactly what was derived; otherwise the claim rewrite is applied to
 * the outbound request after the original was appended (the bug the invariant exists to catch).
 */
async function simulate(
  log: SessionLog,
  ctx: Context,
  plugins: readonly PluginSpec[],
  steps: readonly StepSpec[],
  faithful: boolean,
): Promise<{ checked: number; caught: number; missed: number }> {
  const injectors = mount(ctx, log, plugins);
  const { session_id: id } = await log.create();
  let checked = 0, caught = 0, missed = 0;
  for (const [n, spec] of steps.entries()) {
    const claimed = ctx.waterfall(SimClaim, { content: spec.input }, (claim) => claim);
    for (const injector of injectors) {
      if (injector.kind === "inject" && n % injector.every === 0) {
        await log.append(id, { type: "context/injected", payload: { content: injector.text } });
      }
    }
    await log.append(id, { type: "step/start", payload: {} });
    const appended = faithful ? claimed.content : spec.input;
    await log.append(id, { type: "user/message", payload: { content: appended } });
    let outbound: Message[] = await log.deriveMessages(id);
    if (!faithful) {
      const last = outbound.length - 1;
      outbound = [...outbound.slice(0, last), {
        role: "user",
        parts: [{ type: "text", text: claimed.content }],
      }];
    }
    const differs = digestMessages(outbound) !== digestMessages(await log.deriveMessages(id));
    try {
      const report = await log.assertInvariant(outbound, id);
      assert.equal(report.ok, true);
      if (differs) missed++;
    } catch (error) {
      assert.ok(
        error instanceof TerretError && error.code === "LogInvariantViolation",
        String(error),
      );
      assert.equal(error.details?.first_difference, differs ? outbound.length - 1 : -1);
      caught++;
    }
    checked++;
    await respond(log, id, n, spec);
  }
  return { checked, caught, missed };
}

async function respond(log: SessionLog, id: string, n: number, spec: StepSpec): Promise<void> {
  for (let c = 0; c < spec.chunks; c++) {
    await log.append(id, {
      type: "assistant/chunk",
      payload: { kind: "text", text: `chunk ${c}` },
    });
  }
  const calls = Array.from({ length: spec.calls }, (_, c) => ({
    type: "tool_call" as const,
    id: `call_${n}_${c}`,
    name: "Read",
    args: { path: `/w/${spec.input}`, n: c },
  }));
  await log.append(id, {
    type: "assistant/message",
    payload: { parts: [{ type: "text", text: `echo ${spec.input}` }, ...calls] },
  });
  for (const call of calls) {
    await log.append(id, {
      type: "tool/result",
      payload: { id: call.id, name: call.name, content: `read ${call.args.path}`, is_error: false },
    });
  }
  await log.append(id, {
    type: "step/end",
    payload: {
      usage: { input_tokens: 10, output_tokens: 2 },
      finish_reason: calls.length > 0 ? "tool_calls" : "stop",
    },
  });
  if (spec.compact) {
    await log.append(id, {
      type: "session/compacted",
      payload: { summary: `summary after ${n}: ${spec.input}` },
    });
  }
}

async function withLog<T>(
  store: SessionStore,
  body: (log: SessionLog, ctx: Context) => Promise<T>,
): Promise<T> {
  const ctx = createContext({ mode: "test" });
  try {
    return await body(new SessionLog(ctx, store), ctx);
  } finally {
    await ctx.dispose();
    await store.close();
  }
}

const program = fc.record({
  plugins: fc.array(plugin, { maxLength: 5 }),
  steps: fc.array(step, { minLength: 1, maxLength: 8 }),
});

Deno.test("property: with any plugin set, the outbound digest always matches the log's derivation", async () => {
  await fc.assert(
    fc.asyncProperty(program, async ({ plugins, steps }) => {
      const result = await withLog(
        new MemorySessionStore(),
        (log, ctx) => simulate(log, ctx, plugins, steps, true),
      );
      assert.deepStrictEqual(result, { checked: steps.length, caught: 0, missed: 0 });
    }),
    { numRuns: 300, seed: 20261129 },
  );
});

Deno.test("property: the invariant holds over the SQLite store too", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-property-" });
  try {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(program, async ({ plugins, steps }) => {
        const store = SqliteSessionStore.open({ path: `${dir}/run-${runs++}.db` });
        const result = await withLog(store, (log, ctx) => simulate(log, ctx, plugins, steps, true));
        assert.deepStrictEqual(result, { checked: steps.length, caught: 0, missed: 0 });
      }),
      { numRuns: 40, seed: 7 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("property: a claim rewrite applied after the append (never logged) is always caught", async () => {
  let differing = 0;
  await fc.assert(
    fc.asyncProperty(program, async ({ plugins, steps }) => {
      const result = await withLog(
        new MemorySessionStore(),
        (log, ctx) => simulate(log, ctx, plugins, steps, false),
      );
      assert.equal(result.missed, 0);
      differing += result.caught;
    }),
    { numRuns: 300, seed: 42 },
  );
  assert.ok(differing > 300, `the unlogged rewrite changed the request in ${differing} steps`);
});
