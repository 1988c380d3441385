import assert from "node:assert/strict";
import fc from "fast-check";
import { FAST_CHECKS } from "./_fast_checks.ts";
import { SESSION_EVENT_TYPES } from "./events.ts";
import { normalizePayload } from "./normalize_payload.ts";

/** Any JSON value, small. */
const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** The constants the schemas test for, so generated payloads hit both sides of every test. */
const words = fc.constantFrom(
  "text",
  "image",
  "thinking",
  "tool_call",
  "completed",
  "cancelled",
  "failed",
  "rejected",
  "stop",
  "allow",
  "deny",
);

/** A value for a field: usually of the right kind, sometimes anything. */
function field(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 1, arbitrary: anyJson },
    { weight: 1, arbitrary: words },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** An object with these fields (each possibly missing or wrong) and maybe extra keys. */
function shape(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = fc.record(
    Object.fromEntries(Object.entries(fields).map(([key, valid]) => [key, field(valid)])),
    { requiredKeys: [] },
  );
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(record, fc.dictionary(fc.string(), anyJson, { maxKeys: 2 })).map((
        [r, extra],
      ) => ({ ...extra, ...r })),
    },
    { weight: 1, arbitrary: anyJson },
  );
}

const usage = shape({
  input_tokens: fc.integer(),
  output_tokens: fc.double({ noNaN: true, noDefaultInfinity: true }),
  cached_tokens: fc.integer(),
  cost: fc.double({ noNaN: true, noDefaultInfinity: true }),
});
const args = fc.dictionary(fc.string(), anyJson, { maxKeys: 3 });
const part = fc.oneof(
  shape({ type: fc.constant("text"), text: fc.string() }),
  shape({
    type: fc.constant("image"),
    url: fc.string(),
    data: fc.string(),
    media_type: fc.string(),
  }),
  shape({ type: fc.constant("thinking"), text: fc.string(), signature: fc.string() }),
  shape({ type: fc.constant("tool_call"), id: fc.string(), name: fc.string(), args }),
);
const content = fc.oneof(fc.string(), fc.array(part, { maxLength: 3 }));
const call = shape({ id: fc.string(), name: fc.string(), args });

/** A near-valid payload generator for every type that has a fast check. */
const PAYLOADS: Record<string, fc.Arbitrary<unknown>> = {
  "session/created": shape({ meta: args }),
  "session/titled": shape({ title: fc.string() }),
  "session/compacted": shape({ summary: fc.string() }),
  "turn/start": shape({ agent_id: fc.string() }),
  "turn/end": shape({
    status: fc.constantFrom("completed", "cancelled", "failed", "rejected"),
    error: anyJson,
  }),
  "step/start": shape({ step: fc.integer() }),
  "step/end": shape({ step: fc.integer(), usage, finish_reason: fc.string() }),
  "user/message": shape({
    content,
    queued_seq: fc.oneof(fc.integer({ min: -2, max: 9 }), fc.double()),
  }),
  "context/injected": shape({ content, queued_seq: fc.integer({ min: -2, max: 9 }) }),
  "assistant/chunk": shape({ kind: fc.constantFrom("text", "thinking"), text: fc.string() }),
  "assistant/message": shape({ parts: fc.array(part, { maxLength: 4 }) }),
  "tool/call": shape({ id: fc.string(), name: fc.string(), args, resumed: fc.boolean() }),
  "tool/result": shape({ id: fc.string(), name: fc.string(), content, is_error: fc.boolean() }),
  "approval/requested": shape({ request_id: fc.string(), call }),
  "approval/resolved": shape({
    request_id: fc.string(),
    decision: fc.constantFrom("allow", "deny"),
    reason: fc.string(),
  }),
  "policy/updated": shape({
    allow: fc.array(fc.oneof(fc.string(), anyJson), { maxLength: 3 }),
    ceiling: fc.oneof(fc.boolean(), anyJson),
  }),
  "input/queued": shape({
    kind: fc.constantFrom("message", "steer", "other"),
    content,
    wake: fc.boolean(),
  }),
};

Deno.test("every built-in type but session/forked has a fast check, and a generator here", () => {
  const checked = SESSION_EVENT_TYPES.filter((def) => FAST_CHECKS.has(def)).map((def) => def.name);
  assert.deepStrictEqual(
    checked,
    SESSION_EVENT_TYPES.map((def) => def.name).filter((name) => name !== "session/forked"),
  );
  assert.deepStrictEqual(Object.keys(PAYLOADS).sort(), [...checked].sort());
});

Deno.test("each fast check accepts exactly what its zod schema accepts, on normalized payloads", () => {
  for (const def of SESSION_EVENT_TYPES) {
    const check = FAST_CHECKS.get(def);
    if (check === undefined) continue;
    let accepted = 0;
    fc.assert(
      fc.property(PAYLOADS[def.name]!, (payload) => {
        let value: unknown;
        try {
          value = normalizePayload(def.name, payload).value;
        } catch {
          return; // Not JSON: refused before any schema sees it.
        }
        const zod = def.payload.safeParse(value).success;
        assert.equal(check(value), zod, `${def.name}: ${JSON.stringify(value)}`);
        if (zod) accepted++;
      }),
      { numRuns: 1500, seed: 20261130 },
    );
    // Both verdicts were exercised, not just refusals.
    assert.ok(accepted >= 25, `${def.name}: only ${accepted} generated payloads were valid`);
  }
});
