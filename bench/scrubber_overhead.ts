// deno-lint-ignore-file no-console
/**
 * The streaming scrubber's cost, side by side in one run:
 *
 * 1. Per step through the loop: an agent (memory store, scripted model) answering with a 40-delta reply, with no
 *    scrubber (baseline: the fastest plain way), with a coalescing scrubber (no `safePrefix`: each run appended
 *    whole when it ends) and with the `redaction` row's streaming scrubber (default patterns, one registered
 *    secret). Paired rounds, order rotated; the median per-step time of each and its ratio to the baseline.
 * 2. Per chunk, CPU only: the work the three do for the same 40 deltas (append-side redaction included), as
 *    microseconds per delta and ratios to the baseline (concatenation only).
 * 3. A reply quoting a certificate (`-----BEGIN CERTIFICATE-----`, then 30,000 characters of prose) in 12-character
 *    deltas through the streaming scrubber: how many characters were held until the run's end (not live), and the
 *    CPU per delta against concatenation only.
 *
 * Run: deno run -A bench/scrubber_overhead.ts [--quick]
 *
 * @module
 */
import { RedactionKey, redactionPlugin } from "@terret/core";
import { DEFAULT_REDACTION_PATTERNS, Redactor } from "@terret/core/redaction";
import { createAgentStack, scriptedAdapter, textReply } from "@terret/core/testing";

const QUICK = Deno.args.includes("--quick");
const ROUNDS = QUICK ? 5 : 15;
const STEPS = QUICK ? 10 : 30;
const SECRET = "opal-7Qz-river-88-lantern";
const DELTAS = Array.from({ length: 40 }, (_, i) => `word${String(i).padStart(2, "0")} and `);

type Mode = "none" | "coalescing" | "streaming";
const MODES: readonly Mode[] = ["none", "coalescing", "streaming"];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function stepTime(mode: Mode): Promise<number> {
  const adapter = scriptedAdapter(Array.from({ length: STEPS }, () => textReply(DELTAS)));
  await using stack = await createAgentStack({ adapter, context: { mode: "production" } });
  if (mode === "streaming") {
    stack.ctx.plugin(redactionPlugin, {}, { id: "redaction" });
    await stack.ctx.idle();
    stack.ctx.get(RedactionKey).addSecret(stack.ctx, SECRET);
  } else if (mode === "coalescing") {
    const redactor = new Redactor({ patterns: [...DEFAULT_REDACTION_PATTERNS] });
    redactor.addLiteral(SECRET);
    stack.sessions.registerScrubber(stack.ctx, (text) => redactor.redact(text));
  }
  const agent = await stack.agents.ensure("bench");
  const started = performance.now();
  for (let i = 0; i < STEPS; i++) {
    agent.send(`turn ${i}`);
    await agent.idle();
  }
  return (performance.now() - started) / STEPS;
}

function chunkWork(mode: Mode, redactor: Redactor): number {
  let held = "";
  let out = 0;
  for (const delta of DELTAS) {
    held += delta;
    if (mode === "streaming") {
      const cut = redactor.safePrefix(held, 64);
      if (cut > 0) {
        out += redactor.redact(held.slice(0, cut)).length;
        held = held.slice(cut);
      }
    }
  }
  return out + (mode === "none" ? held.length : redactor.redact(held).length);
}

const perStep: Record<Mode, number[]> = { none: [], coalescing: [], streaming: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < MODES.length; k++) {
    const mode = MODES[(round + k) % MODES.length]!;
    perStep[mode].push(await stepTime(mode));
  }
}
const base = median(perStep.none);
console.log(`per step (40-delta reply, ${STEPS} steps x ${ROUNDS} rounds, median ms/step):`);
for (const mode of MODES) {
  const ms = median(perStep[mode]);
  console.log(`  ${mode.padEnd(11)} ${ms.toFixed(3)} ms  x${(ms / base).toFixed(3)} vs none`);
}

const redactor = new Redactor({ patterns: [...DEFAULT_REDACTION_PATTERNS] });
redactor.addLiteral(SECRET);
const REPS = QUICK ? 2_000 : 10_000;
const perDelta: Record<Mode, number[]> = { none: [], coalescing: [], streaming: [] };
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < MODES.length; k++) {
    const mode = MODES[(round + k) % MODES.length]!;
    const started = performance.now();
    for (let i = 0; i < REPS; i++) sink += chunkWork(mode, redactor);
    perDelta[mode].push((performance.now() - started) * 1000 / (REPS * DELTAS.length));
  }
}
const baseDelta = median(perDelta.none);
console.log(`per delta, CPU only (median µs/delta over ${REPS} replies x ${ROUNDS} rounds):`);
for (const mode of MODES) {
  const us = median(perDelta[mode]);
  console.log(`  ${mode.padEnd(11)} ${us.toFixed(3)} µs  x${(us / baseDelta).toFixed(1)} vs none`);
}

const CERT_REPLY = "Here is the chain:\n-----BEGIN CERTIFICATE-----\n" +
  "MIIDdzCCAl+gAwIBAgIE\n".repeat(40) +
  "-----END CERTIFICATE-----\nNow run the command " + "and more words ".repeat(2000);
const CERT_DELTAS = CERT_REPLY.match(/[\s\S]{1,12}/g)!;
/** Streams the certificate reply; returns the characters held until the end (`none`: concatenation only). */
function certWork(mode: "none" | "streaming"): number {
  let held = "";
  for (const delta of CERT_DELTAS) {
    held += delta;
    if (mode === "streaming") {
      const cut = redactor.safePrefix(held, 64);
      sink += redactor.redact(held.slice(0, cut)).length;
      held = held.slice(cut);
    }
  }
  sink += held.length;
  return held.length;
}
const CERT_REPS = QUICK ? 3 : 10;
const perCertDelta: Record<"none" | "streaming", number[]> = { none: [], streaming: [] };
let heldToEnd = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (
    const mode of round % 2 === 0 ? ["none", "streaming"] as const : ["streaming", "none"] as const
  ) {
    const started = performance.now();
    for (let i = 0; i < CERT_REPS; i++) {
      const held = certWork(mode);
      if (mode === "streaming") heldToEnd = held;
    }
    perCertDelta[mode].push(
      (performance.now() - started) * 1000 / (CERT_REPS * CERT_DELTAS.length),
    );
  }
}
const certBase = median(perCertDelta.none);
const certStreaming = median(perCertDelta.streaming);
console.log(
  `a reply quoting a certificate (${CERT_REPLY.length} characters, ${CERT_DELTAS.length} deltas): ` +
    `${heldToEnd} characters held until the end; streaming ${certStreaming.toFixed(3)} µs/delta ` +
    `x${(certStreaming / certBase).toFixed(1)} vs none (${certBase.toFixed(3)} µs)`,
);
if (sink === 0) console.log("(unreachable)");
