import assert from "node:assert/strict";
import { createContext, TerretError } from "@terret/hames";
import { LlmStream } from "./events.ts";
import { Llm, LlmRegistry } from "./llm_registry.ts";
import { DEFAULT_CAPABILITIES } from "./openrouter/adapter.ts";
import type { LlmAdapter, LlmRequest, LlmStreamOptions, StreamEvent } from "./vocabulary.ts";

const REQUEST: LlmRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "Hi" }] }] };

/** A scripted adapter that answers with its name and records what it was asked. */
function scripted(
  name: string,
): LlmAdapter & { calls: { request: LlmRequest; options: LlmStreamOptions }[] } {
  const calls: { request: LlmRequest; options: LlmStreamOptions }[] = [];
  return {
    calls,
    capabilities: { ...DEFAULT_CAPABILITIES, maxContextTokens: name.length * 1000 },
    countTokens: () => name.length,
    async *stream(request, options = {}) {
      calls.push({ request, options });
      yield { type: "message_start" };
      yield { type: "text_delta", text: name };
      yield { type: "message_stop", finishReason: "stop" };
    },
  };
}

async function text(stream: AsyncIterable<StreamEvent>): Promise<string> {
  let out = "";
  for await (const event of stream) if (event.type === "text_delta") out += event.text;
  return out;
}

async function registry(): Promise<{ ctx: ReturnType<typeof createContext>; llm: LlmRegistry }> {
  const ctx = createContext({ mode: "test" });
  await ctx.plugin(LlmRegistry).settled();
  return { ctx, llm: ctx.get(Llm) };
}

Deno.test("LlmRegistry routes by role and falls back to main for a role without an adapter", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  llm.register(ctx, { role: "main", adapter: scripted("main") });
  llm.register(ctx, { role: "titler", adapter: scripted("titler") });
  assert.deepStrictEqual(llm.roles(), ["main", "titler"]);
  assert.equal(await text(llm.stream(REQUEST)), "main");
  assert.equal(await text(llm.stream(REQUEST, { role: "titler" })), "titler");
  assert.equal(await text(llm.stream(REQUEST, { role: "compactor" })), "main");
  assert.equal(llm.resolve("subagent"), "main");
  assert.equal(llm.capabilities("titler").maxContextTokens, 6000);
  assert.equal(llm.countTokens(REQUEST, { role: "compactor" }), 4);
});

Deno.test("LlmRegistry reports a missing adapter, and refuses a second adapter for a role", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  assert.throws(
    () => llm.stream(REQUEST, { role: "titler" }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "LlmMissing" &&
      error.message ===
        'Cannot resolve a model adapter for role "titler": none is registered for it or for "main"',
  );
  llm.register(ctx, { role: "main", adapter: scripted("a") });
  assert.throws(
    () => llm.register(ctx, { role: "main", adapter: scripted("b") }),
    (error: unknown) =>
      error instanceof TerretError && error.code === "LlmRoleTaken" &&
      error.message ===
        'Cannot register a model adapter for role "main": another adapter already serves it',
  );
});

Deno.test("an adapter registration dies with the context that made it", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  const row = ctx.scope("llm.titler");
  llm.register(row, { role: "titler", adapter: scripted("titler") });
  const dispose = llm.register(ctx, { role: "main", adapter: scripted("main") });
  assert.deepStrictEqual(llm.roles(), ["titler", "main"]);
  await row.dispose();
  assert.deepStrictEqual(llm.roles(), ["main"]);
  await dispose();
  assert.deepStrictEqual(llm.roles(), []);
});

Deno.test("llm/stream middleware can rewrite the request and role, or replace the stream", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  const main = scripted("main");
  llm.register(ctx, { role: "main", adapter: main });
  llm.register(ctx, { role: "titler", adapter: scripted("titler") });
  const seen: string[] = [];
  ctx.on(LlmStream, (payload, next) => {
    seen.push(`outer ${payload.role}`);
    return next({ ...payload, request: { ...payload.request, model: "routed/model" } });
  });
  ctx.on(LlmStream, (payload, next) => {
    seen.push(`inner ${payload.request.model}`);
    if (payload.request.system === "title this") return next({ ...payload, role: "titler" });
    if (payload.request.system === "canned") {
      return (async function* (): AsyncGenerator<StreamEvent> {
        yield { type: "text_delta", text: "canned" };
        yield { type: "message_stop", finishReason: "stop" };
      })();
    }
    return next();
  });
  assert.equal(await text(llm.stream(REQUEST)), "main");
  assert.equal(await text(llm.stream({ ...REQUEST, system: "title this" })), "titler");
  assert.equal(await text(llm.stream({ ...REQUEST, system: "canned" })), "canned");
  assert.deepStrictEqual(seen, [
    "outer main",
    "inner routed/model",
    "outer main",
    "inner routed/model",
    "outer main",
    "inner routed/model",
  ]);
  assert.equal(main.calls.length, 1);
  assert.equal(main.calls[0]!.request.model, "routed/model");
  assert.equal(main.calls[0]!.options.signal instanceof AbortSignal, true);
});

Deno.test("middleware on an agent's fork applies only to requests dispatched from that fork", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  llm.register(ctx, { role: "main", adapter: scripted("main") });
  const agent = ctx.fork("agent-1");
  agent.on(LlmStream, () =>
    (async function* (): AsyncGenerator<StreamEvent> {
      yield { type: "text_delta", text: "agent middleware" };
      yield { type: "message_stop", finishReason: "stop" };
    })());
  assert.equal(await text(llm.stream(REQUEST, { ctx: agent })), "agent middleware");
  assert.equal(await text(llm.stream(REQUEST)), "main");
});

Deno.test("llm/stream refuses a rewritten payload that breaks the request contract", async () => {
  const { ctx, llm } = await registry();
  await using _ = ctx;
  llm.register(ctx, { role: "main", adapter: scripted("main") });
  ctx.on(
    LlmStream,
    (payload, next) =>
      next({
        ...payload,
        request: { messages: [{ role: "system", parts: [] }] } as unknown as LlmRequest,
      }),
  );
  assert.throws(
    () => llm.stream(REQUEST),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ContractViolation" &&
      error.message.startsWith(
        'Cannot dispatch "llm/stream": the payload breaks its contract: request.messages.0.role',
      ),
  );
});
