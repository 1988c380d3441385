import assert from "node:assert/strict";
import { z } from "zod";
import {
  createContext,
  createMemoryLogger,
  defineEvent,
  ListenerFailed,
  TerretError,
} from "./mod.ts";

const Emitted = defineEvent("test/emitted", {
  mode: "emit",
  description: "t",
  payload: z.number(),
});
const Flowed = defineEvent("test/flowed", {
  mode: "waterfall",
  description: "t",
  payload: z.number(),
  result: z.string(),
});
const Fanned = defineEvent("test/fanned", {
  mode: "parallel",
  description: "t",
  payload: z.number(),
});
const Decided = defineEvent("test/decided", {
  mode: "serial",
  description: "t",
  payload: z.number(),
  result: z.string(),
});

type Behaviour = "pass" | "throw" | "stop" | "rewrite";

/** What a listener can do in each mode: emit and parallel ignore return values, serial has no next(). */
const BEHAVIOURS = {
  emit: ["pass", "throw"],
  waterfall: ["pass", "throw", "stop", "rewrite"],
  parallel: ["pass", "throw"],
  serial: ["pass", "throw", "stop"],
} as const satisfies Record<string, readonly Behaviour[]>;

const VERBS: Record<Behaviour, string> = {
  pass: "passes",
  throw: "throws",
  stop: "stops the chain",
  rewrite: "rewrites the payload",
};

/**
 * The generated cases of one mode: no listeners; one listener that behaves; three listeners whose middle one
 * behaves (the others pass). `at` is the index of the behaving listener, -1 when there is none.
 */
function cases(
  mode: keyof typeof BEHAVIOURS,
): { name: string; count: number; at: number; behaviour: Behaviour }[] {
  const out: { name: string; count: number; at: number; behaviour: Behaviour }[] = [
    { name: `${mode}: no listeners`, count: 0, at: -1, behaviour: "pass" },
  ];
  for (const behaviour of BEHAVIOURS[mode]) {
    out.push({
      name: `${mode}: 1 listener that ${VERBS[behaviour]}`,
      count: 1,
      at: 0,
      behaviour,
    });
    out.push({
      name: `${mode}: 3 listeners, the middle one ${VERBS[behaviour]}`,
      count: 3,
      at: 1,
      behaviour,
    });
  }
  return out;
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

for (const { name, count, at, behaviour } of cases("emit")) {
  Deno.test(name, () => {
    const logger = createMemoryLogger();
    const ctx = createContext({ mode: "test", logger });
    const calls: string[] = [];
    const failures: string[] = [];
    ctx.on(ListenerFailed, ({ event, error }) => {
      failures.push(`${event}:${(error as Error).message}`);
    });
    for (let i = 0; i < count; i++) {
      ctx.on(Emitted, (n) => {
        calls.push(`${i}:${n}`);
        if (i === at && behaviour === "throw") throw new Error("boom");
      });
    }
    ctx.emit(Emitted, 7);
    // A throwing listener is isolated: every listener still runs, and the failure is reported and logged.
    assert.deepStrictEqual(calls, upTo(count).map((i) => `${i}:7`));
    const threw = behaviour === "throw";
    assert.deepStrictEqual(failures, threw ? ["test/emitted:boom"] : []);
    assert.equal(logger.records.length, threw ? 1 : 0);
  });
}

for (const { name, count, at, behaviour } of cases("waterfall")) {
  Deno.test(name, () => {
    const ctx = createContext({ mode: "test" });
    const calls: string[] = [];
    for (let i = 0; i < count; i++) {
      ctx.on(Flowed, (n, next) => {
        calls.push(`${i}:${n}`);
        if (i === at && behaviour === "throw") throw new Error("boom");
        if (i === at && behaviour === "stop") return "short";
        if (i === at && behaviour === "rewrite") return next(n + 100) + "!";
        return next();
      });
    }
    const run = () => ctx.waterfall(Flowed, 1, (n) => `inner:${n}`);
    const reached = upTo(at + 1).map((i) => `${i}:1`);
    if (behaviour === "throw") {
      assert.throws(run, /boom/);
      assert.deepStrictEqual(calls, reached);
    } else if (behaviour === "stop") {
      assert.deepStrictEqual([run(), calls], ["short", reached]);
    } else if (behaviour === "rewrite") {
      const after = upTo(count).slice(at + 1).map((i) => `${i}:101`);
      assert.deepStrictEqual([run(), calls], ["inner:101!", [...reached, ...after]]);
    } else {
      assert.deepStrictEqual([run(), calls], ["inner:1", upTo(count).map((i) => `${i}:1`)]);
    }
  });
}

for (const { name, count, at, behaviour } of cases("parallel")) {
  Deno.test(name, async () => {
    const ctx = createContext({ mode: "test" });
    const started: number[] = [];
    const finished: number[] = [];
    const gate = Promise.withResolvers<void>();
    for (let i = 0; i < count; i++) {
      ctx.on(Fanned, async () => {
        started.push(i);
        await gate.promise;
        if (i === at && behaviour === "throw") throw new Error("boom");
        finished.push(i);
      });
    }
    const done = ctx.parallel(Fanned, 1);
    // Every listener starts before any finishes: the fan-out is concurrent.
    assert.deepStrictEqual(started, upTo(count));
    assert.deepStrictEqual(finished, []);
    gate.resolve();
    if (behaviour === "throw") {
      await assert.rejects(done, /boom/);
      // The rejection waits for every sibling to settle.
      assert.deepStrictEqual(finished, upTo(count).filter((i) => i !== at));
    } else {
      await done;
      assert.deepStrictEqual(finished, upTo(count));
    }
  });
}

for (const { name, count, at, behaviour } of cases("serial")) {
  Deno.test(name, async () => {
    const ctx = createContext({ mode: "test" });
    const calls: number[] = [];
    for (let i = 0; i < count; i++) {
      ctx.on(Decided, async (n) => {
        await Promise.resolve();
        calls.push(i);
        if (i === at && behaviour === "throw") throw new Error("boom");
        if (i === at && behaviour === "stop") return `decided:${n}`;
        return undefined;
      });
    }
    const result = ctx.serial(Decided, 5);
    if (behaviour === "throw") {
      await assert.rejects(result, /boom/);
      assert.deepStrictEqual(calls, upTo(at + 1));
    } else if (behaviour === "stop") {
      assert.deepStrictEqual([await result, calls], ["decided:5", upTo(at + 1)]);
    } else {
      assert.deepStrictEqual([await result, calls], [undefined, upTo(count)]);
    }
  });
}

Deno.test("emit isolates a rejecting async listener and reports it", async () => {
  const ctx = createContext({ mode: "test", logger: createMemoryLogger() });
  const failures: unknown[] = [];
  const reported = Promise.withResolvers<void>();
  ctx.on(ListenerFailed, ({ error }) => {
    failures.push((error as Error).message);
    reported.resolve();
  });
  ctx.on(Emitted, async () => {
    await Promise.resolve();
    throw new Error("late");
  });
  ctx.emit(Emitted, 1);
  // emit returns before the listener settles; its rejection is reported once it does.
  assert.deepStrictEqual(failures, []);
  await reported.promise;
  assert.deepStrictEqual(failures, ["late"]);
});

Deno.test("a throwing listener_failed listener is only logged (no recursion)", () => {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "test", logger });
  ctx.on(ListenerFailed, () => {
    throw new Error("listener of failures broke");
  });
  ctx.on(Emitted, () => {
    throw new Error("first");
  });
  ctx.emit(Emitted, 1);
  assert.deepStrictEqual(logger.records.map((record) => record.message), [
    'Listener of "test/emitted" failed',
    'Listener of "hames/listener_failed" failed',
  ]);
});

Deno.test("waterfall: next() twice is a TypeError", () => {
  const ctx = createContext({ mode: "test" });
  ctx.on(Flowed, (n, next) => {
    next(n);
    return next(n);
  });
  assert.throws(
    () => ctx.waterfall(Flowed, 1, (n) => String(n)),
    (error: unknown) =>
      error instanceof TypeError &&
      /Cannot call next\(\) twice.*"test\/flowed"/.test(error.message),
  );
});

Deno.test("waterfall: prepend runs first; async listeners compose", async () => {
  const ctx = createContext({ mode: "test" });
  const AsyncFlow = defineEvent("test/async_flow", {
    mode: "waterfall",
    description: "t",
    payload: z.string(),
    result: z.promise(z.string()),
  });
  ctx.on(AsyncFlow, async (s, next) => `a(${await next(s + "a")})`);
  ctx.on(AsyncFlow, async (s, next) => `b(${await next(s + "b")})`);
  ctx.on(AsyncFlow, async (s, next) => `p(${await next(s + "p")})`, { prepend: true });
  const result = await ctx.waterfall(AsyncFlow, "", async (s) => {
    await Promise.resolve();
    return `inner:${s}`;
  });
  assert.equal(result, "p(a(b(inner:pab)))");
});

Deno.test("a listener disposed during emit still sees that emit (snapshot), not later ones", () => {
  const ctx = createContext({ mode: "test" });
  const calls: string[] = [];
  const second = () => calls.push("second");
  ctx.on(Emitted, () => {
    calls.push("first");
    off();
  });
  const off = ctx.on(Emitted, second);
  ctx.emit(Emitted, 1);
  ctx.emit(Emitted, 2);
  assert.deepStrictEqual(calls, ["first", "second", "first"]);
});

Deno.test("contracts: undeclared events and wrong modes throw in test mode", () => {
  const ctx = createContext({ mode: "test" });
  const forged = { name: "test/emitted", mode: "emit" } as unknown as typeof Emitted;
  assert.throws(
    () => ctx.emit(forged, 1),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ContractViolation" &&
      /undeclared event/.test(error.message),
  );
  assert.throws(
    () => ctx.emit(Flowed as unknown as typeof Emitted, 1),
    /Cannot emit "test\/flowed": it is declared as a waterfall event/,
  );
  assert.throws(
    () => ctx.waterfall(Emitted as unknown as typeof Flowed, 1, String),
    /Cannot waterfall "test\/emitted": it is declared as a emit event/,
  );
  assert.throws(() => ctx.on(forged, () => {}), /Cannot listen to an undeclared event/);
});

Deno.test("contracts: a second definition with the same name is refused", () => {
  const ctx = createContext({ mode: "test" });
  const Twin = defineEvent("test/emitted", { mode: "emit", description: "t", payload: z.number() });
  ctx.on(Emitted, () => {});
  assert.throws(() => ctx.emit(Twin, 1), /declared twice with different definitions/);
});

Deno.test("contracts: payloads are validated in test mode, including waterfall rewrites", () => {
  const ctx = createContext({ mode: "test" });
  assert.throws(
    () => ctx.emit(Emitted, "seven" as unknown as number),
    (error: unknown) =>
      error instanceof TerretError && error.code === "ContractViolation" &&
      /payload breaks its contract: \(root\): Invalid input: expected number, received string/.test(
        error.message,
      ),
  );
  ctx.on(Flowed, (_n, next) => next("bad" as unknown as number));
  assert.throws(
    () => ctx.waterfall(Flowed, 1, String),
    /"test\/flowed": the payload breaks its contract/,
  );
});

Deno.test("contracts: production logs a violation and skips the dispatch", async () => {
  const logger = createMemoryLogger();
  const ctx = createContext({ mode: "production", logger });
  const calls: number[] = [];
  ctx.on(Flowed, (n, next) => {
    calls.push(n);
    return next();
  });
  ctx.emit(Flowed as unknown as typeof Emitted, 1);
  assert.equal(
    ctx.waterfall(Emitted as unknown as typeof Flowed, 2, (n) => `inner:${n}`),
    "inner:2",
  );
  assert.equal(await ctx.serial(Emitted as unknown as typeof Decided, 3), undefined);
  assert.deepStrictEqual(calls, []);
  assert.deepStrictEqual(logger.records.map((record) => [record.level, record.message]), [
    ["error", 'Cannot emit "test/flowed": it is declared as a waterfall event'],
    ["error", 'Cannot waterfall "test/emitted": it is declared as a emit event'],
    ["error", 'Cannot serial "test/emitted": it is declared as a emit event'],
  ]);
});
