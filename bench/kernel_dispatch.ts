// deno-lint-ignore-file no-console
/**
 * Kernel dispatch benchmark: emit to 1 and 10 listeners and a 5-listener waterfall, for Hames (development mode
 * with contracts checked, and production mode), for the `cordis` npm package, and for the floors: plain calls
 * of the same listeners, and for the waterfall a chain of the same 5 listeners built once (each listener closed
 * over its prebuilt `next`), the fastest plain way to run a fixed middleware chain.
 *
 * Every case runs in one timing loop, once per round, the order rotated each round; each figure is the median over
 * rounds and each ratio the median of the per-round ratios (load on a shared machine moves both sides of a round
 * together).
 *
 * Run: deno run -A bench/kernel_dispatch.ts [--quick]
 *
 * @module
 */
import { z } from "zod";
import { Context as CordisContext } from "npm:cordis@4.0.0-rc.10";
import { type Context, createContext, defineEvent } from "@terret/hames";
import { median, type PairedCase, pairedRatio, pairedRounds } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ROUNDS = quick ? 5 : 21;
const ITERATIONS = quick ? 200_000 : 1_000_000;
const CORDIS_ITERATIONS = quick ? 5_000 : 20_000;

const Ping = defineEvent("bench/ping", {
  mode: "emit",
  description: "bench",
  payload: z.object({ n: z.number() }),
});
const Flow = defineEvent("bench/flow", {
  mode: "waterfall",
  description: "bench",
  payload: z.object({ n: z.number() }),
  result: z.number(),
});

type Payload = { n: number };
type Next = (p: Payload) => number;
let sink = 0;
const listener = (p: Payload): void => void (sink += p.n);
const step = (p: Payload, next: Next): number => next(p) + 1;
const terminal = (p: Payload): number => p.n;

function hames(mode: "development" | "production", listeners: number): Context {
  const ctx = createContext({ mode });
  for (let i = 0; i < listeners; i++) ctx.on(Ping, listener);
  for (let i = 0; i < 5; i++) ctx.on(Flow, step);
  return ctx;
}

function cordis(listeners: number): CordisContext {
  const ctx = new CordisContext();
  // deno-lint-ignore no-explicit-any
  const events = ctx as any;
  for (let i = 0; i < listeners; i++) events.on("bench-ping", listener);
  for (let i = 0; i < 5; i++) {
    events.on("bench-flow", (_p: Payload, next: () => number) => next() + 1);
  }
  return ctx;
}

// Eight payloads taken in turn, so no loop can fold a constant payload's result away.
const payloads: readonly Payload[] = Array.from({ length: 8 }, (_, n) => ({ n }));
const cases: PairedCase[] = [];

for (const count of [1, 10]) {
  const plain = Array.from({ length: count }, () => listener);
  cases.push({
    name: `plain calls, ${count} fn`,
    iterations: ITERATIONS,
    loop(n) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < plain.length; j++) plain[j]!(payloads[i & 7]!);
      }
    },
  });
  for (const mode of ["development", "production"] as const) {
    const ctx = hames(mode, count);
    cases.push({
      name: `hames emit (${mode === "development" ? "dev" : "prod"}), ${count} listener(s)`,
      iterations: ITERATIONS,
      loop(n) {
        for (let i = 0; i < n; i++) ctx.emit(Ping, payloads[i & 7]!);
      },
    });
  }
  // deno-lint-ignore no-explicit-any
  const c = cordis(count) as any;
  cases.push({
    name: `cordis emit, ${count} listener(s)`,
    iterations: CORDIS_ITERATIONS,
    loop(n) {
      for (let i = 0; i < n; i++) c.emit("bench-ping", payloads[i & 7]!);
    },
  });
}

// The waterfall floor: the same 5 listeners, each bound once to its successor.
let chain: Next = terminal;
for (let i = 0; i < 5; i++) {
  const next = chain;
  chain = (p) => step(p, next);
}
const prebuilt = chain;
cases.push({
  name: "plain prebuilt 5-fn chain",
  iterations: ITERATIONS,
  loop(n) {
    for (let i = 0; i < n; i++) sink += prebuilt(payloads[i & 7]!);
  },
});
for (const mode of ["development", "production"] as const) {
  const ctx = hames(mode, 0);
  cases.push({
    name: `hames waterfall (${mode === "development" ? "dev" : "prod"}), 5 listeners`,
    iterations: ITERATIONS,
    loop(n) {
      for (let i = 0; i < n; i++) sink += ctx.waterfall(Flow, payloads[i & 7]!, terminal);
    },
  });
}
// deno-lint-ignore no-explicit-any
const cordisFlow = cordis(0) as any;
const cordisTerminal = (_p: Payload): number => 1;
cases.push({
  name: "cordis waterfall, 5 listeners",
  iterations: CORDIS_ITERATIONS,
  loop(n) {
    for (let i = 0; i < n; i++) {
      sink += cordisFlow.waterfall("bench-flow", payloads[i & 7]!, cordisTerminal);
    }
  },
});

const timings = pairedRounds(cases, ROUNDS);
const perSecond = (name: string): number => 1e9 / median(timings.get(name)!);
const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");
const width = Math.max(...cases.map((c) => c.name.length));
console.log(
  `operations per second, median of ${ROUNDS} rounds (one loop, order rotated per round):`,
);
for (const c of cases) {
  console.log(`${c.name.padEnd(width)}  ${fmt(perSecond(c.name)).padStart(14)} /s`);
}
/** How many times faster `fast` is than `slow`: the median of per-round time ratios. */
const x = (slow: string, fast: string): string => `${pairedRatio(timings, slow, fast).toFixed(1)}x`;
console.log("\nratios, median of per-round ratios (time of the slower / time of the faster):");
for (const count of [1, 10]) {
  const dev = `hames emit (dev), ${count} listener(s)`;
  const prod = `hames emit (prod), ${count} listener(s)`;
  const floor = `plain calls, ${count} fn`;
  console.log(
    `  emit x${count}: cordis / hames dev = ${x(`cordis emit, ${count} listener(s)`, dev)}, ` +
      `hames dev / plain = ${x(dev, floor)}, hames prod / plain = ${x(prod, floor)}`,
  );
}
console.log(
  `  waterfall x5: cordis / hames dev = ${
    x("cordis waterfall, 5 listeners", "hames waterfall (dev), 5 listeners")
  }, hames dev / prebuilt chain = ${
    x("hames waterfall (dev), 5 listeners", "plain prebuilt 5-fn chain")
  }, hames prod / prebuilt chain = ${
    x("hames waterfall (prod), 5 listeners", "plain prebuilt 5-fn chain")
  }`,
);
console.log(
  `\ntargets: emit x1 >= 5,000,000/s (dev: ${
    fmt(perSecond("hames emit (dev), 1 listener(s)"))
  }), waterfall x5 >= 2,000,000/s (dev: ${fmt(perSecond("hames waterfall (dev), 5 listeners"))})`,
);
if (sink === -1) console.log(sink);
