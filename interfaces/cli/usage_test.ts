import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import { SessionsKey, sessionsPlugin, sqliteStorePlugin } from "@terret/core";
import { runTrt, type TrtIo } from "./mod.ts";

function io(): TrtIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    env: { get: () => undefined },
    cwd: Deno.cwd(),
  };
}

Deno.test("trt usage prints each session's title and usage from the headless profile's store, text and JSON", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-usage-" }));
  try {
    {
      await using ctx = createContext({ mode: "test" });
      ctx.plugin(sqliteStorePlugin, { path: "sessions/terret.db", dir: home }, {
        id: "sessions.store",
      });
      ctx.plugin(sessionsPlugin, {}, { id: "sessions" });
      await ctx.idle();
      const sessions = ctx.get(SessionsKey);
      await sessions.create({ session_id: "alpha" });
      for (
        const [type, payload] of [
          ["step/start", { step: 1 }],
          [
            "step/end",
            {
              step: 1,
              usage: { input_tokens: 900, output_tokens: 40, cached_tokens: 800, cost: 0.0125 },
              finish_reason: "stop",
            },
          ],
          ["session/titled", {
            title: "Nightly release",
            usage: { input_tokens: 30, output_tokens: 4 },
          }],
          ["step/start", { step: 1 }],
        ] as const
      ) await sessions.append("alpha", { type, payload });
      await sessions.create({ session_id: "beta" });
    }
    const captured = io();
    assert.equal(await runTrt(["usage", "--home", home], captured), 0);
    assert.deepStrictEqual(captured.err, []);
    assert.equal(
      captured.out.join(""),
      "session                          in_tokens  out_tokens  cached  cost       steps  unknown  utility  title\n" +
        "alpha                                  930          44     800   0.012500      1        1        1  Nightly release\n" +
        "beta                                     0           0       0          -      0        0        0  -\n",
    );
    const json = io();
    assert.equal(await runTrt(["usage", "--home", home, "--session", "alpha", "--json"], json), 0);
    assert.deepStrictEqual(JSON.parse(json.out.join("")), [{
      session_id: "alpha",
      title: "Nightly release",
      head_seq: 5,
      usage: {
        steps: 1,
        unknown_steps: 1,
        utility_calls: 1,
        input_tokens: 930,
        output_tokens: 44,
        cached_tokens: 800,
        cost: 0.0125,
      },
    }]);
    const missing = io();
    assert.equal(await runTrt(["usage", "--home", home, "--session", "gamma"], missing), 2);
    assert.deepStrictEqual(missing.err, [
      'trt usage: cannot read session "gamma": the store does not hold it\n',
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
