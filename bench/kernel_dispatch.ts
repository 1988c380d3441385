// deno-lint-ignore-file no-console
/**
 * Kernel dispatch benchmark: emit to 1 and 10 listeners and a 5-listener waterfall, for Hames (development mode
 * with contracts checked, and production mode), for the `cordis` npm package, and for plain function calls (the
 * floor). Prints operations per second and the ratios.
 *
 * Run: deno run -A bench/kernel_dispatch.ts [--quick]
 *
 * @module
 */
import { z } from "zod";
import { Context as CordisContext } from "npm:cordis@4.0.0-rc.10";
import { type Context, createContext, defineEvent } from "@terret/hames";
import { formatTable, measure } from "./_measure.ts";

const quick = Deno.args.includes("--quick");
const ITERATIONS = quick ? 200_000 : 2_000_000;
const CORDIS_ITERATIONS = quick ? 20_000 : 100_000;

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
let sink = 0;

function hames(mode: "development" | "production", listeners: number): Context {
  const ctx = createContext({ mode });
  for (let i = 0; i < listeners; i++) ctx.on(Ping, (p) => void (sink += p.n));
  for (let i = 0; i < 5; i++) ctx.on(Flow, (p, next) => next(p) + 1);
  return ctx;
}

function cordis(listeners: number): CordisContext {
  const ctx = new CordisContext();
  // deno-lint-ignore no-explicit-any
  const events = ctx as any;
  for (let i = 0; i < listeners; i++) events.on("bench-ping", (p: Payload) => void (sink += p.n));
  for (let i = 0; i < 5; i++) {
    events.on("bench-flow", (_p: Payload, next: () => number) => next() + 1);
  }
  return ctx;
}

const payload: Payload = { n: 1 };
const rows: { name: string; perSecond: number }[] = [];

for (const count of [1, 10]) {
  const plain: ((p: Payload) => void)[] = Array.from(
    { length: count },
    () => (p: Payload) => void (sink += p.n),
  );
  rows.push(measure(`plain calls, ${count} fn`, ITERATIONS, () => {
    for (let i = 0; i < plain.length; i++) plain[i]!(payload);
  }));
  const dev = hames("development", count);
  rows.push(
    measure(`hames emit (dev), ${count} listener(s)`, ITERATIONS, () => dev.emit(Ping, payload)),
  );
  const prod = hames("production", count);
  rows.push(
    measure(`hames emit (prod), ${count} listener(s)`, ITERATIONS, () => prod.emit(Ping, payload)),
  );
  // deno-lint-ignore no-explicit-any
  const c = cordis(count) as any;
  rows.push(
    measure(
      `cordis emit, ${count} listener(s)`,
      CORDIS_ITERATIONS,
      () => c.emit("bench-ping", payload),
    ),
  );
}

const chain = Array.from(
  { length: 5 },
  () => (p: Payload, next: (p: Payload) => number) => next(p) + 1,
);
const runChain = (index: number, p: Payload): number =>
  index === chain.length ? p.n : chain[index]!(p, (q) => runChain(index + 1, q));
rows.push(
  measure("plain calls, 5-fn chain", ITERATIONS, () => void (sink += runChain(0, payload))),
);
const devFlow = hames("development", 0);
rows.push(measure("hames waterfall (dev), 5 listeners", ITERATIONS, () => {
  sink += devFlow.waterfall(Flow, payload, (p) => p.n);
}));
const prodFlow = hames("production", 0);
rows.push(measure("hames waterfall (prod), 5 listeners", ITERATIONS, () => {
  sink += prodFlow.waterfall(Flow, payload, (p) => p.n);
}));
// deno-lint-ignore no-explicit-any
const cordisFlow = cordis(0) as any;
rows.push(measure("cordis waterfall, 5 listeners", CORDIS_ITERATIONS, () => {
  sink += cordisFlow.waterfall("bench-flow", payload, (_p: Payload) => 1);
}));

const by = (name: string): number => rows.find((row) => row.name === name)!.perSecond;
console.log(formatTable(rows));
console.log("\nratios (higher is faster):");
for (const count of [1, 10]) {
  const floor = by(`plain calls, ${count} fn`);
  const dev = by(`hames emit (dev), ${count} listener(s)`);
  const prod = by(`hames emit (prod), ${count} listener(s)`);
  const c = by(`cordis emit, ${count} listener(s)`);
  console.log(
    `  emit x${count}: hames dev / cordis = ${(dev / c).toFixed(1)}x, plain / hames dev = ${
      (floor / dev).toFixed(1)
    }x, plain / hames prod = ${(floor / prod).toFixed(1)}x`,
  );
}
const wfFloor = by("plain calls, 5-fn chain");
const wfDev = by("hames waterfall (dev), 5 listeners");
const wfProd = by("hames waterfall (prod), 5 listeners");
const wfCordis = by("cordis waterfall, 5 listeners");
console.log(
  `  waterfall x5: hames dev / cordis = ${(wfDev / wfCordis).toFixed(1)}x, plain / hames dev = ${
    (wfFloor / wfDev).toFixed(1)
  }x, plain / hames prod = ${(wfFloor / wfProd).toFixed(1)}x`,
);
console.log(
  `\ntargets: emit x1 >= 5,000,000/s (dev: ${
    fmt(by("hames emit (dev), 1 listener(s)"))
  }), waterfall x5 >= 2,000,000/s (dev: ${fmt(wfDev)})`,
);
if (sink === -1) console.log(sink);

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
