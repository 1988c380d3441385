/**
 * Titles (the `titles` row): one `session/titled` after the first completed turn, from the `titler` role (falling
 * back to `main`), or the first 40 characters of the first message when that call fails; never again unless asked.
 * The durable events match `tests/golden/titles/<scenario>.jsonl`.
 * Regenerate after an intended change with `UPDATE_GOLDEN=1 deno test -A tests/titles_test.ts`.
 */
import assert from "node:assert/strict";
import { type LlmRequest, Titler, TitlesKey } from "@terret/core";
import { TITLE_INSTRUCTIONS } from "@terret/core/llm";
import {
  createAgentStack,
  errorReply,
  eventShapes,
  type ResponseScript,
  scriptedAdapter,
  textReply,
} from "@terret/core/testing";
import { until } from "../exec/process/_testing.ts";
import { assertGolden } from "./fixtures/golden.ts";

const FIRST =
  "Please migrate the billing service from cron jobs to the new scheduler, keeping the logs";

function responder(title: string | "fail"): ResponseScript[] {
  let replies = 0;
  return Array.from({ length: 8 }, (): ResponseScript => (request: LlmRequest) => {
    if (request.system === TITLE_INSTRUCTIONS) {
      return title === "fail"
        ? errorReply({ kind: "http", status: 500, message: "Titler down", retryable: false })
        : textReply(title, { usage: { input_tokens: 40, output_tokens: 6, cost: 0.0001 } });
    }
    return textReply(`Reply ${++replies}.`);
  });
}

async function titledRun(title: string | "fail", sessionId: string) {
  const adapter = scriptedAdapter(responder(title));
  const stack = await createAgentStack({ adapter });
  stack.ctx.plugin(Titler, {}, { id: "titles" });
  await stack.ctx.idle();
  const agent = await stack.agents.ensure(sessionId);
  agent.send(FIRST);
  await agent.idle();
  const titled = async (count: number) =>
    (await stack.sessions.read(sessionId)).filter((event) => event.type === "session/titled")
      .length === count;
  await until("the session/titled event", () => titled(1));
  agent.send("And the invoices too.");
  await agent.idle();
  return { adapter, stack, titled };
}

Deno.test("golden: the first completed turn is titled once by the titler role; later turns are not", async () => {
  const { adapter, stack } = await titledRun('"Migrate billing to the scheduler."', "titled");
  await using _ = stack;
  const events = await stack.sessions.read("titled");
  await assertGolden("titles/titled", eventShapes(events));
  const titles = events.filter((event) => event.type === "session/titled");
  assert.deepStrictEqual(titles.map((event) => event.payload), [{
    title: "Migrate billing to the scheduler",
    usage: { input_tokens: 40, output_tokens: 6, cost: 0.0001 },
  }]);
  assert.deepStrictEqual(
    adapter.requests.filter((request) => request.system === TITLE_INSTRUCTIONS).map((r) =>
      r.messages
    ),
    [[{ role: "user", parts: [{ type: "text", text: FIRST }] }]],
  );
  assert.equal(
    await stack.ctx.get(TitlesKey).current("titled"),
    "Migrate billing to the scheduler",
  );
  const usage = await stack.sessions.usage("titled");
  assert.deepStrictEqual([usage.utility_calls, usage.input_tokens, usage.cost], [1, 60, 0.0001]);
});

Deno.test("golden: a failed titler call falls back to the first 40 characters of the first message", async () => {
  const { stack } = await titledRun("fail", "fallback");
  await using _ = stack;
  const events = await stack.sessions.read("fallback");
  await assertGolden("titles/fallback", eventShapes(events));
  assert.deepStrictEqual(
    events.filter((event) => event.type === "session/titled").map((event) => event.payload),
    [{ title: "Please migrate the billing service from", fallback: true }],
  );
});

Deno.test("title() re-titles only when asked with force", async () => {
  const { stack, titled } = await titledRun("Billing migration", "asked");
  await using _ = stack;
  const titles = stack.ctx.get(TitlesKey);
  assert.equal(await titles.title("asked"), undefined);
  assert.equal(await titled(1), true);
  const again = await titles.title("asked", { force: true });
  assert.deepStrictEqual(again?.payload, {
    title: "Billing migration",
    usage: { input_tokens: 40, output_tokens: 6, cost: 0.0001 },
  });
  assert.equal(await titled(2), true);
  await assert.rejects(titles.title("nobody"), {
    code: "SessionNotFound",
    message: 'Cannot title session "nobody": the log does not hold it',
  });
});
