/**
 * The generative log-invariant property (plan §11, left open by the seed's M2): random plugin sets that inject
 * context and rewrite claims drive a faithful simulation of the loop's claim → append → derive → outbound path,
 * and the outbound request always equals an independent projection: a reference derive written plainly here, over
 * a fresh read of the store (never the log's history cache), whose last user message is the claimed text after
 * the scrubbers. The log's own invariant check agrees. The negative property: a rewrite applied after the append
 * (so never logged) is always caught.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { type Context, createContext, defineEvent, TerretError } from "@terret/hames";
import { type Message, type SessionEvent, SessionLog, type SessionStore } from "@terret/core";
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

/**
 * The reference projection, written plainly and independently of `derive_messages.ts`: user messages and injected
 * context are user turns, assistant messages keep their parts, a tool result is a tool turn, a compaction replaces
 * everything before it with its summary; nothing else is projected.
 */
function referenceDerive(events: readonly SessionEvent[]): Message[] {
  let history: Message[] = [];
  for (const event of events) {
    const payload = event.payload as Record<string, unknown>;
    switch (event.type) {
      case "user/message":
      case "context/injected":
        history.push({ role: "user", parts: [{ type: "text", text: payload.content as string }] });
        break;
      case "assistant/message":
        history.push({ role: "assistant", parts: payload.parts as Message["parts"] });
        break;
      case "tool/result":
        history.push({
          role: "tool",
          parts: [{
            type: "tool_result",
            id: payload.id as string,
            name: payload.name as string,
            content: payload.content as string,
            is_error: payload.is_error as boolean,
          }],
        });
        break;
      case "session/compacted":
        history = [{ role: "user", parts: [{ type: "text", text: payload.summary as string }] }];
        break;
    }
  }
  return history;
}

interface Mounted {
  readonly injectors: PluginSpec[];
  /** What the scrubbers make of a string, in registration order. */
  readonly scrub: (value: string) => string;
}

function mount(ctx: Context, log: SessionLog, plugins: readonly PluginSpec[]): Mounted {
  const injectors: PluginSpec[] = [];
  const secrets: string[] = [];
  for (const spec of plugins) {
    if (spec.kind === "rewrite") {
      ctx.on(SimClaim, (claim, next) => next({ content: apply(spec.rewrite, claim.content) }));
    } else if (spec.kind === "scrub") {
      secrets.push(spec.secret);
      log.registerScrubber(ctx, (value) => value.replaceAll(spec.secret, "[REDACTED]"));
    } else {
      injectors.push(spec);
    }
  }
  const scrub = (value: string): string =>
    secrets.reduce((out, secret) => out.replaceAll(secret, "[REDACTED]"), value);
  return { injectors, scrub };
}

/**
 * One simulated turn per step. `faithful` sends exactly what was derived; otherwise the claim rewrite is applied to
 * the outbound request after the original was appended (the bug the invariant exists to catch).
 */
async function simulate(
  log: SessionLog,
  ctx: Context,
  fresh: (sessionId: string) => Promise<SessionEvent[]>,
  plugins: readonly PluginSpec[],
  steps: readonly StepSpec[],
  faithful: boolean,
): Promise<{ checked: number; caught: number; missed: number }> {
  const { injectors, scrub } = mount(ctx, log, plugins);
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
    const reference = referenceDerive(await fresh(id));
    // The claimed text, scrubbed, is the last thing the reference sends.
    assert.deepStrictEqual(reference.at(-1), {
      role: "user",
      parts: [{ type: "text", text: scrub(faithful ? claimed.content : spec.input) }],
    });
    const differs = digestMessages(outbound) !== digestMessages(reference);
    if (faithful) assert.deepStrictEqual(outbound, reference);
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

/**
 * Runs `body` over a log on `store`; `fresh` reads the store as a second reader would (default: the store itself,
 * below the log's cache).
 */
async function withLog<T>(
  store: SessionStore,
  body: (
    log: SessionLog,
    ctx: Context,
    fresh: (id: string) => Promise<SessionEvent[]>,
  ) => Promise<T>,
  reader: SessionStore = store,
): Promise<T> {
  const ctx = createContext({ mode: "test" });
  try {
    return await body(new SessionLog(ctx, store), ctx, (id) => reader.read(id));
  } finally {
    await ctx.dispose();
    await store.close();
    if (reader !== store) await reader.close();
  }
}

const program = fc.record({
  plugins: fc.array(plugin, { maxLength: 5 }),
  steps: fc.array(step, { minLength: 1, maxLength: 8 }),
});

Deno.test("property: with any plugin set, the outbound request equals a reference projection of a fresh store read", async () => {
  await fc.assert(
    fc.asyncProperty(program, async ({ plugins, steps }) => {
      const result = await withLog(
        new MemorySessionStore(),
        (log, ctx, fresh) => simulate(log, ctx, fresh, plugins, steps, true),
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
        // A second connection to the same file reads what the first made durable.
        const path = `${dir}/run-${runs++}.db`;
        const store = SqliteSessionStore.open({ path });
        const result = await withLog(
          store,
          (log, ctx, fresh) => simulate(log, ctx, fresh, plugins, steps, true),
          SqliteSessionStore.open({ path }),
        );
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
        (log, ctx, fresh) => simulate(log, ctx, fresh, plugins, steps, false),
      );
      assert.equal(result.missed, 0);
      differing += result.caught;
    }),
    { numRuns: 300, seed: 42 },
  );
  assert.ok(differing > 300, `the unlogged rewrite changed the request in ${differing} steps`);
});
